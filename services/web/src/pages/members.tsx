import { invitations, members } from '../api/endpoints.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { InviteSection, PendingInvitation } from '../components/invitations.tsx'
import { MemberTable } from '../components/member-table.tsx'
import {
  CreateOrganizationSection,
  DeleteOrganizationSection,
  LeaveSection,
} from '../components/organization-sections.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { ROLE_DESCRIPTIONS } from '../lib/roles.ts'
import { useSession } from '../lib/session.tsx'
import { usePolled } from '../lib/use-poll.ts'

const POLL_MS = 15_000

/**
 * The organization's people: who is in it with which role (and changing or removing them), pending
 * invitations (inviting, copying the one-time link, revoking), leaving, and deleting the organization.
 * Each control shows only for a role that may use it; the server decides every request regardless.
 */
export function MembersPage() {
  const { account, can } = useSession()
  const organization = account!.organization!
  const list = usePolled(
    (signal) => (can('members:read') ? members.list(signal) : Promise.resolve([])),
    organization.id,
    POLL_MS,
  )
  const pending = usePolled(
    (signal) => (can('members:manage') ? invitations.list(signal) : Promise.resolve([])),
    organization.id,
    POLL_MS,
  )

  return (
    <section className="page">
      <PageHeading title="Members" />
      <p className="muted">
        {organization.name}: you are{' '}
        {organization.role === 'owner' || organization.role === 'admin' ? 'an' : 'a'}{' '}
        <strong>{organization.role}</strong> ({ROLE_DESCRIPTIONS[organization.role]}).
      </p>
      {can('members:manage') ? <InviteSection onInvited={pending.refresh} /> : null}
      {can('members:read') ? (
        <section aria-labelledby="members-heading">
          <h2 id="members-heading">People</h2>
          <ErrorAlert error={list.error} />
          {list.loading ? (
            <p role="status">Loading members…</p>
          ) : (
            <MemberTable rows={list.data ?? []} onChanged={list.refresh} />
          )}
        </section>
      ) : null}
      {can('members:manage') ? (
        <section aria-labelledby="pending-heading">
          <h2 id="pending-heading">Pending invitations</h2>
          <ErrorAlert error={pending.error} />
          {pending.data?.length === 0 ? (
            <p className="empty">No pending invitations.</p>
          ) : (
            <ul className="card-list">
              {pending.data?.map((invitation) => (
                <PendingInvitation key={invitation.id} invitation={invitation} onRevoked={pending.refresh} />
              ))}
            </ul>
          )}
        </section>
      ) : null}
      <LeaveSection members={list.data} onRefused={list.refresh} />
      {can('organization:delete') ? <DeleteOrganizationSection /> : null}
      <CreateOrganizationSection />
    </section>
  )
}
