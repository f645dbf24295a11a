import { pipeline } from '../api/endpoints.ts'
import { describeFreshness } from '../lib/freshness.ts'
import { useSession } from '../lib/session.tsx'
import { usePolled } from '../lib/use-poll.ts'

const POLL_MS = 5_000

/**
 * How current the figures on the page are ("Up to date", "Analysis 4 min behind"), polled. A polite live
 * region, there from the start so that screen readers hear when it changes, and nothing that flashes.
 */
export function Freshness() {
  const { can } = useSession()
  const allowed = can('analytics:read')
  const status = usePolled(
    (signal) => (allowed ? pipeline.status(signal) : Promise.resolve(undefined)),
    allowed ? 'status' : '',
    allowed ? POLL_MS : undefined,
  )
  if (!allowed) return null
  const described = status.data ? describeFreshness(status.data) : undefined
  return (
    <p className={`freshness ${described?.tone ?? ''}`} role="status">
      {described ? (
        <>
          <span className="freshness-dot" aria-hidden="true" />
          {described.text}
        </>
      ) : null}
    </p>
  )
}
