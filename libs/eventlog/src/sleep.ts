/** A sleep that `wake()` or an abort signal ends early. */
export class Waiter {
  private timer: NodeJS.Timeout | undefined
  private resolve: (() => void) | undefined

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.resolve = resolve
      this.timer = setTimeout(() => this.wake(), ms)
    })
  }

  wake(): void {
    clearTimeout(this.timer)
    const resolve = this.resolve
    this.resolve = undefined
    resolve?.()
  }
}

/** Exponential backoff with full jitter, capped. */
export function backoffMs(attempt: number, baseMs = 100, capMs = 5_000): number {
  return Math.random() * Math.min(capMs, baseMs * 2 ** attempt)
}

/** A plain sleep (several may run at once, unlike one Waiter's). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
