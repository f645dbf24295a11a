import { Counter } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { type ConsumerSource, Metrics, metricSet } from './metrics.ts'

function consumer(groupId: string, lag: ConsumerSource['lag'], paused = false): ConsumerSource {
  return {
    groupId,
    stats: { applied: 7, duplicates: 2, dropped: 0, errors: 1, paused, lastAppliedOccurredAt: null },
    lag,
  }
}

describe('Metrics', () => {
  it('reports each pool it observes', async () => {
    const metrics = new Metrics()
    metrics.observePool('primary', { totalCount: 5, idleCount: 2, waitingCount: 0, options: { max: 20 } })
    metrics.observePool('reader', { totalCount: 1, idleCount: 1, waitingCount: 3, options: { max: 4 } })
    const { body, contentType } = await metrics.render()
    expect(contentType).toMatch(/^text\/plain/)
    expect(body).toContain('cas_pg_pool_connections{pool="primary"} 5')
    expect(body).toContain('cas_pg_pool_idle_connections{pool="primary"} 2')
    expect(body).toContain('cas_pg_pool_waiting_requests{pool="reader"} 3')
    expect(body).toContain('cas_pg_pool_max_connections{pool="reader"} 4')
  })

  it('still answers when a collector fails or hangs, leaving out only what it could not read', async () => {
    const errors: string[] = []
    const metrics = new Metrics({ onError: (what) => errors.push(what) })
    metrics.observeConsumer(consumer('broken', () => Promise.reject(new Error('database down'))))
    metrics.observeConsumer(consumer('hung', () => new Promise(() => {})))
    metrics.observeConsumer(
      consumer('fine', async () => [{ topic: 'conversation-events', partition: 3, lag: 12 }]),
    )
    const { body } = await metrics.render()
    expect(body).toContain(
      'cas_consumer_lag_events{group="fine",topic="conversation-events",partition="3"} 12',
    )
    expect(body).not.toMatch(/cas_consumer_lag_events\{group="(broken|hung)"/)
    expect(body).toContain('cas_consumer_applied_events_total{group="broken"} 7')
    expect(body).toContain('cas_consumer_duplicate_events_total{group="hung"} 2')
    expect(errors.sort()).toEqual(['consumer lag of broken', 'consumer lag of hung'])
  })

  it('says which consumers back-pressure holds back', async () => {
    const metrics = new Metrics()
    metrics.observeConsumer(consumer('analysis', async () => [], true))
    metrics.observeConsumer(consumer('projector', async () => []))
    const { body } = await metrics.render()
    expect(body).toContain('cas_consumer_paused{group="analysis"} 1')
    expect(body).toContain('cas_consumer_paused{group="projector"} 0')
  })

  it("declares a service's metric set once per instance, and keeps separate instances apart", async () => {
    let created = 0
    const set = metricSet('test', ({ registers }) => {
      created++
      return new Counter({ name: 'cas_test_events_total', help: 'A test counter.', registers })
    })
    const a = new Metrics()
    const b = new Metrics()
    a.use(set).inc(3)
    expect(a.use(set)).toBe(a.use(set))
    b.use(set)
    expect(created).toBe(2)
    expect((await a.render()).body).toContain('cas_test_events_total 3')
    expect((await b.render()).body).toContain('cas_test_events_total 0')
  })
})
