/** Polls `check` until it returns a truthy value or the deadline passes (never a fixed sleep). */
export async function waitFor<T>(
  check: () => Promise<T> | T,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000)
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value) return value as Exclude<T, false | null | undefined | 0 | ''>
      last = value
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${opts.what ?? 'condition'} (last: ${String(last)})`)
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 25))
  }
}
