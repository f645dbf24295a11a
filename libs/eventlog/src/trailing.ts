import type { SourcedRecord } from './apply-batch.ts'

/** A batch (or chunk of one) from a Kafka partition, as the trailing order sees it. */
export interface TrailingPart {
  readonly source: { readonly topic: string; readonly partition: number }
  readonly batch: readonly SourcedRecord[]
  /** Whether its partition had events after this batch when it was fetched. */
  readonly more: boolean
  /**
   * Journal position of the last event its fetch brought from the partition (a fetch is applied in
   * batches of a bounded size): a held trailing partition resumes once the leader has passed it, so
   * that fetching it again brings events that can all be applied, not the same ones cut again.
   */
  readonly fetchedTo?: bigint
}

interface Front {
  /** Journal position of the last leader event applied from this partition. */
  readonly position: bigint
  /** Whether the leader's partition had more events after it, as last fetched. */
  readonly more: boolean
}

interface Hold {
  /** The hold ends once the leader has applied past this journal position (see `fetchedTo`). */
  readonly position: bigint
  resume?: () => void
  timer?: NodeJS.Timeout
}

/**
 * Keeps a trailing topic's partitions from running ahead of a leading topic's partition of the same
 * number, by journal position. The projector reads conversations (leader) and their analysis
 * (trailing): a message's analysis is always later in the journal than the message, but its events
 * are a fraction of the size, so over a backlog a Kafka fetch of the analysis topic reaches far
 * further into the journal than one of the conversation topic. Applied first, each result makes a
 * placeholder row that its message later has to find and complete: nearly twice the database work per
 * message. So a trailing batch is applied up to the leader's position on its partition number, and the
 * rest waits (its partition paused) until the leader has applied past all its fetch brought, has
 * nothing more to apply, or `maxHoldMs` has passed. Only an ordering for speed: whatever order events
 * come in, the projection is the same.
 *
 * Positions are compared per partition number, so the topics must be co-partitioned (a key in the same
 * partition number of each). A leader partition this member has applied nothing from holds nothing
 * back, unless it is known to be `behind`.
 */
export class TrailingOrder {
  private readonly fronts = new Map<number, Front>()
  private readonly holds = new Map<number, Hold>()

  constructor(
    readonly leaderTopic: string,
    readonly trailingTopic: string,
    private readonly maxHoldMs = 30_000,
  ) {}

  /**
   * How many records of each part may be applied now, in one transaction that applies the parts in
   * order (a leader part before a trailing part of the same partition number advances the front for
   * it). A trailing part cut short records a hold on its partition.
   */
  admit(parts: readonly TrailingPart[]): number[] {
    const fronts = new Map(this.fronts)
    return parts.map((part) => {
      const p = part.source.partition
      if (part.source.topic === this.leaderTopic) {
        const last = part.batch[part.batch.length - 1]
        if (last) fronts.set(p, { position: BigInt(last.record.position), more: part.more })
        return part.batch.length
      }
      if (part.source.topic !== this.trailingTopic) return part.batch.length
      const front = fronts.get(p)
      if (!front?.more) return part.batch.length
      const cut = part.batch.findIndex((r) => BigInt(r.record.position) > front.position)
      if (cut < 0) return part.batch.length
      this.release(p)
      const first = BigInt(part.batch[cut]!.record.position)
      const to = part.fetchedTo !== undefined && part.fetchedTo > first ? part.fetchedTo : first
      this.holds.set(p, { position: to })
      return cut
    })
  }

  /** After the transaction committed: the leader parts' fronts, and the holds they end. */
  committed(parts: readonly TrailingPart[]): void {
    for (const part of parts) {
      if (part.source.topic !== this.leaderTopic) continue
      const last = part.batch[part.batch.length - 1]
      if (last)
        this.fronts.set(part.source.partition, { position: BigInt(last.record.position), more: part.more })
    }
    for (const [p, hold] of this.holds) {
      const front = this.fronts.get(p)
      if (!front?.more || front.position >= hold.position) this.release(p)
    }
  }

  /**
   * The held partition stops being fetched (`pause` returns the function that resumes it), unless its
   * hold has ended meanwhile. Returns whether it was paused.
   */
  pause(partition: number, pause: () => () => void): boolean {
    const hold = this.holds.get(partition)
    if (!hold) return false
    hold.resume = pause()
    hold.timer = setTimeout(() => this.release(partition), this.maxHoldMs)
    hold.timer.unref()
    return true
  }

  /**
   * The leader's partition has events this member has not applied (its lag, on joining the group):
   * until it applies some, its trailing partition waits for them. Otherwise a first fetch that brings
   * the trailing partition but not yet the leader's (a fetch is cut at its size limit) would run ahead.
   */
  behind(partition: number): void {
    if (!this.fronts.has(partition)) this.fronts.set(partition, { position: -1n, more: true })
  }

  /** Partitions held back now (for tests and logs). */
  held(): number[] {
    return [...this.holds.keys()]
  }

  /** A new assignment: partitions may have moved, so nothing this member knew holds any more. */
  reset(): void {
    for (const p of [...this.holds.keys()]) this.release(p)
    this.fronts.clear()
  }

  private release(partition: number): void {
    const hold = this.holds.get(partition)
    if (!hold) return
    this.holds.delete(partition)
    if (hold.timer) clearTimeout(hold.timer)
    hold.resume?.()
  }
}
