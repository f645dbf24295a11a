import { withOrgScope } from '@cas/db'
import type pg from 'pg'
import { chatbotsBehind } from './repositories/chatbots.ts'

const POLL_MS = 10

/**
 * Read-your-writes (DESIGN guarantee 5): waits, bounded by `timeoutMs`, until `caughtUp` says the read
 * model has applied what the write side recorded for the resource read. Returns whether it has; a read
 * that gives up answers with what the read model holds.
 */
export async function waitForProjection(
  caughtUp: () => Promise<boolean>,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await caughtUp()) return true
    if (Date.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

/**
 * Waits, bounded, until the chatbots' read model holds every change the write side committed to the
 * organization's chatbots (or to this one): for a read that depends on their settings, such as the signals
 * report (which signals are on, a custom one's label), so that a settings change shows at the very next read.
 */
export function waitForChatbots(
  pool: pg.Pool,
  orgId: string,
  chatbotId: string | undefined,
  timeoutMs: number,
): Promise<boolean> {
  return waitForProjection(
    () => withOrgScope(pool, orgId, async (client) => (await chatbotsBehind(client, orgId, chatbotId)) === 0),
    timeoutMs,
  )
}
