import { useState } from 'react'
import { audit } from '../api/endpoints.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { CursorPager } from '../components/pager.tsx'
import { auditActor, describeAuditEntry } from '../lib/audit.ts'
import { formatDateTime } from '../lib/format.ts'
import { useSession } from '../lib/session.tsx'
import { usePolled } from '../lib/use-poll.ts'

const POLL_MS = 15_000

/** Who did what in the organization, newest first, a page at a time (owners and admins). */
export function AuditPage() {
  const { account } = useSession()
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined])
  const cursor = cursors.at(-1)
  const page = usePolled(
    (signal) => audit.list(cursor, signal),
    `${account?.organization?.id}|${cursor ?? ''}`,
    cursors.length === 1 ? POLL_MS : undefined,
  )
  return (
    <section className="page">
      <PageHeading title="Audit log" />
      <p className="muted">
        Members invited, joined, removed and their roles changed; chatbots created, renamed, reconfigured,
        their keys rotated and deleted; end users' data erased. Newest first.
      </p>
      <ErrorAlert error={page.error} />
      {page.loading ? (
        <p role="status">Loading the audit log…</p>
      ) : page.data?.entries.length === 0 ? (
        <p className="empty">Nothing has happened yet.</p>
      ) : (
        <ol className="card audit-list">
          {page.data?.entries.map((entry) => (
            <li key={entry.id}>
              <time dateTime={entry.occurredAt}>{formatDateTime(entry.occurredAt)}</time>{' '}
              <strong>{auditActor(entry)}</strong> {describeAuditEntry(entry)}
            </li>
          ))}
        </ol>
      )}
      <CursorPager
        label="Audit log pages"
        cursors={cursors}
        nextCursor={page.data?.nextCursor}
        onChange={setCursors}
      />
    </section>
  )
}
