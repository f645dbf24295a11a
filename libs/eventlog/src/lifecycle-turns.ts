/**
 * The starts and stops of something that runs in the background (an event consumer, the relay), one after
 * another in the order they were asked for: each runs once those asked for before it have ended, whether or
 * not they failed. A start never runs while a stop gives back what an earlier start took, and a stop asked
 * for while a start is under way gives back what that start took. A start learns whether a stop was asked
 * for after it (`stopped()`, which a start that waits checks after each wait): it then starts nothing more,
 * since that stop runs after it.
 */
export class LifecycleTurns {
  /** The last start or stop asked for, settled whatever its outcome. */
  private last: Promise<void> = Promise.resolve()
  /** Stops asked for so far. */
  private stops = 0

  start<T>(step: (stopped: () => boolean) => Promise<T>): Promise<T> {
    const stops = this.stops
    return this.inTurn(() => step(() => stops !== this.stops))
  }

  stop<T>(step: () => Promise<T>): Promise<T> {
    this.stops++
    return this.inTurn(step)
  }

  private inTurn<T>(step: () => Promise<T>): Promise<T> {
    const done = this.last.then(step)
    this.last = done.then(
      () => {},
      () => {},
    )
    return done
  }
}
