/** A sleep that `wake()` ends early. */
export class Waiter {
  private timer: NodeJS.Timeout | undefined
  private resolve: (() => void) | undefined

  /** `unref`: the sleep does not keep the process alive on its own (housekeeping). */
  constructor(private readonly opts: { readonly unref?: boolean } = {}) {}

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.resolve = resolve
      this.timer = setTimeout(() => this.wake(), ms)
      if (this.opts.unref) this.timer.unref()
    })
  }

  wake(): void {
    clearTimeout(this.timer)
    const resolve = this.resolve
    this.resolve = undefined
    resolve?.()
  }
}
