import { describe, expect, it } from 'vitest'
import { OldestPendingEstimator, type PartitionLook } from './lag-probe.ts'

const HOUR = 3_600_000
const look = (partition: string, pending: number, lastAppliedAt: number | null): PartitionLook => ({
  partition,
  pending,
  lastAppliedAt,
})

describe('the oldest pending message of a Kafka group, estimated without reading it', () => {
  it('is none when no partition is behind', () => {
    const estimator = new OldestPendingEstimator()
    expect(estimator.estimate([look('t/0', 0, 5), look('t/1', 0, null)], 1_000, null)).toEqual({
      oldest: null,
      unbounded: false,
    })
  })

  it('at the first look, is after the last message applied from each partition behind (the earliest)', () => {
    const estimator = new OldestPendingEstimator()
    const t = 10 * HOUR
    expect(estimator.estimate([look('t/0', 3, t - 60_000), look('t/1', 1, t - 5_000)], t, null)).toEqual({
      oldest: t - 60_000,
      unbounded: false,
    })
  })

  it('at the first look, has no bound for a partition behind that the group never applied from', () => {
    const estimator = new OldestPendingEstimator()
    expect(estimator.estimate([look('t/0', 2, null), look('t/1', 1, 7_000)], 9_000, null)).toEqual({
      oldest: 7_000,
      unbounded: true,
    })
  })

  it('says seconds, not an hour, when a partition idle for an hour gets a message', () => {
    // Given a partition whose last message was applied an hour ago, caught up at the previous look
    const estimator = new OldestPendingEstimator()
    const t = 10 * HOUR
    estimator.estimate([look('t/0', 0, t - HOUR)], t, null)
    // When a message arrives and the next look, 2 s later, finds it not applied yet
    const { oldest } = estimator.estimate([look('t/0', 1, t - HOUR)], t + 2_000, null)
    // Then it was committed after the previous look
    expect(oldest).toBe(t)
  })

  it("keeps a backlog's age when the relay, behind, flushes it into Kafka between two looks", () => {
    // Given the relay 10 minutes behind at a look where the group had nothing pending in Kafka
    const estimator = new OldestPendingEstimator()
    const t = 10 * HOUR
    estimator.estimate([look('t/0', 0, t - HOUR)], t, t - 600_000)
    // When the relay has published its backlog by the next look
    const { oldest } = estimator.estimate([look('t/0', 500, t - HOUR)], t + 2_000, null)
    // Then those messages can be as old as the relay's oldest was
    expect(oldest).toBe(t - 600_000)
  })

  it('follows the group through a backlog: the later of when it fell behind and what it last applied', () => {
    const estimator = new OldestPendingEstimator()
    const t = 10 * HOUR
    estimator.estimate([look('t/0', 0, t - HOUR)], t, null)
    expect(estimator.estimate([look('t/0', 900, t - HOUR)], t + 2_000, null).oldest).toBe(t)
    // Applying, it reaches messages committed after it fell behind
    expect(estimator.estimate([look('t/0', 400, t + 1_500)], t + 4_000, null).oldest).toBe(t + 1_500)
    // Caught up, then behind again: it fell behind since the look before
    expect(estimator.estimate([look('t/0', 0, t + 3_900)], t + 6_000, null).oldest).toBeNull()
    expect(estimator.estimate([look('t/0', 2, t + 3_900)], t + 8_000, null).oldest).toBe(t + 6_000)
  })
})
