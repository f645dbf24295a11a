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
