import { describe, expect, it, vi } from 'vitest'
import type { JournalRecord } from './records.ts'
import { TrailingOrder, type TrailingPart } from './trailing.ts'

const LEADER = 'conversations'
const TRAILING = 'analysis'

/** A part of `topic`'s partition `partition` holding events at these journal positions. */
function part(topic: string, partition: number, positions: number[], more: boolean): TrailingPart {
  return {
    source: { topic, partition },
    batch: positions.map((position, i) => ({
      record: { position: String(position) } as JournalRecord,
      offset: String(i),
    })),
    more,
  }
}

describe('TrailingOrder', () => {
  it('applies a trailing batch up to the leader of its partition number, when the leader has more', () => {
    const order = new TrailingOrder(LEADER, TRAILING)
    // In one transaction: the leader's batch reaches position 20, and its partition has more.
    const admitted = order.admit([
      part(LEADER, 0, [10, 20], true),
      part(TRAILING, 0, [15, 20, 25, 30], false),
    ])
    expect(admitted).toEqual([2, 2])
    expect(order.held()).toEqual([0])
  })

  it('holds nothing back once the leader has nothing more, nor for a partition it knows nothing of', () => {
    const order = new TrailingOrder(LEADER, TRAILING)
    expect(order.admit([part(TRAILING, 1, [5, 50], true)])).toEqual([2])
    expect(order.admit([part(LEADER, 0, [10], false), part(TRAILING, 0, [15, 99], true)])).toEqual([1, 2])
    expect(order.held()).toEqual([])
  })

  it('compares positions per partition number, as numbers beyond 2^53', () => {
    const order = new TrailingOrder(LEADER, TRAILING)
    const big = (n: number) => (2n ** 60n + BigInt(n)).toString()
    const leader: TrailingPart = {
      source: { topic: LEADER, partition: 3 },
      batch: [{ record: { position: big(1) } as JournalRecord, offset: '7' }],
      more: true,
    }
    const trailing: TrailingPart = {
      source: { topic: TRAILING, partition: 3 },
      batch: [big(1), big(2)].map((position, i) => ({
        record: { position } as JournalRecord,
        offset: String(i),
      })),
      more: false,
    }
    order.admit([leader])
    order.committed([leader])
    // Another partition number's leader says nothing about partition 3.
    expect(order.admit([part(LEADER, 2, [1], true), trailing])).toEqual([1, 1])
  })

  it('remembers the leader across transactions, and resumes a held partition once the leader passes it', () => {
    const order = new TrailingOrder(LEADER, TRAILING)
    const leader = part(LEADER, 0, [10, 20], true)
    order.admit([leader])
    order.committed([leader])
    expect(order.admit([part(TRAILING, 0, [15, 30, 40], true)])).toEqual([1])
    const resume = vi.fn()
    expect(order.pause(0, () => resume)).toBe(true)

    const further = part(LEADER, 0, [25], true)
    order.admit([further])
    order.committed([further])
    expect(resume).not.toHaveBeenCalled()
    expect(order.held()).toEqual([0])

    const past = part(LEADER, 0, [35], true)
    order.admit([past])
    order.committed([past])
    expect(resume).toHaveBeenCalledOnce()
    expect(order.held()).toEqual([])
  })

  it('keeps a partition held until the leader has passed all its fetch brought, not just the cut', () => {
    const order = new TrailingOrder(LEADER, TRAILING)
    const leader = part(LEADER, 0, [10], true)
    order.committed([leader])
    // The chunk applied is cut at 15; the fetch brought the partition's events up to 90.
    const trailing = { ...part(TRAILING, 0, [5, 15, 20], true), fetchedTo: 90n }
    expect(order.admit([trailing])).toEqual([1])
    const resume = vi.fn()
    order.pause(0, () => resume)
    order.committed([part(LEADER, 0, [50], true)])
    expect(resume).not.toHaveBeenCalled()
    order.committed([part(LEADER, 0, [90], true)])
    expect(resume).toHaveBeenCalledOnce()
  })

  it('resumes a held partition when the leader has nothing more', () => {
    const order = new TrailingOrder(LEADER, TRAILING)
    expect(order.admit([part(LEADER, 0, [10], true), part(TRAILING, 0, [30], false)])).toEqual([1, 0])
    const resume = vi.fn()
    order.pause(0, () => resume)
    const caughtUp = part(LEADER, 0, [12], false)
    order.committed([caughtUp])
    expect(resume).toHaveBeenCalledOnce()
  })

  it('does not pause a partition whose hold ended before the pause (a concurrent transaction)', () => {
    const order = new TrailingOrder(LEADER, TRAILING)
    const leader = part(LEADER, 0, [10], true)
    order.committed([leader])
    expect(order.admit([part(TRAILING, 0, [30], false)])).toEqual([0])
    order.committed([part(LEADER, 0, [40], true)])
    const pause = vi.fn(() => () => {})
    expect(order.pause(0, pause)).toBe(false)
    expect(pause).not.toHaveBeenCalled()
  })

  it('resumes after maxHoldMs whatever the leader does, and everything on a new assignment', () => {
    vi.useFakeTimers()
    try {
      const order = new TrailingOrder(LEADER, TRAILING, 1_000)
      order.committed([part(LEADER, 0, [10], true), part(LEADER, 1, [10], true)])
      order.admit([part(TRAILING, 0, [30], false)])
      order.admit([part(TRAILING, 1, [30], false)])
      const resumed: number[] = []
      order.pause(0, () => () => resumed.push(0))
      order.pause(1, () => () => resumed.push(1))
      vi.advanceTimersByTime(999)
      expect(resumed).toEqual([])
      order.reset()
      expect(resumed).toEqual([0, 1])
      // Reset forgets the leader: nothing is held back until it applies again.
      expect(order.admit([part(TRAILING, 0, [30], false)])).toEqual([1])

      order.committed([part(LEADER, 0, [10], true)])
      order.admit([part(TRAILING, 0, [30], false)])
      order.pause(0, () => () => resumed.push(2))
      vi.advanceTimersByTime(1_000)
      expect(resumed).toEqual([0, 1, 2])
    } finally {
      vi.useRealTimers()
    }
  })

  it('leaves the other topics alone', () => {
    const order = new TrailingOrder(LEADER, TRAILING)
    order.committed([part(LEADER, 0, [10], true)])
    expect(order.admit([part('chatbots', 0, [50, 60], true)])).toEqual([2])
  })
})
