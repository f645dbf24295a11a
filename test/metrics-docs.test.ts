// Every metric docs/operations.md documents is declared exactly once: by the metrics every process has
// (@cas/metrics) or by the one service that owns it (its MetricSet), and nothing undocumented is.
import { readFileSync } from 'node:fs'
import { type MetricSet, Metrics } from '@cas/metrics'
import { PIPELINE_METRICS } from '@cas/platform'
import { ANALYSIS_METRICS } from '@cas/service-analysis'
import { CAPTURE_METRICS, RATE_LIMIT_METRICS } from '@cas/service-gateway'
import { RELAY_METRICS } from '@cas/service-relay'
import { describe, expect, it } from 'vitest'

const names = (metrics: Metrics) => metrics.registry.getMetricsAsArray().map((m) => m.name)

/** The metric names of docs/operations.md's table, in its order. */
function documented(): string[] {
  const doc = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8')
  return [...doc.matchAll(/^\| `(cas_[a-z_]+)`/gm)].map((m) => m[1]!)
}

describe('the metrics docs/operations.md documents', () => {
  it('are each declared exactly once, by every process or by the one service that owns them', () => {
    const base = names(new Metrics())
    const owned = (
      [
        CAPTURE_METRICS,
        RATE_LIMIT_METRICS,
        RELAY_METRICS,
        ANALYSIS_METRICS,
        PIPELINE_METRICS,
      ] as MetricSet<unknown>[]
    ).flatMap((set) => {
      const metrics = new Metrics()
      metrics.use(set)
      return names(metrics).filter((n) => !base.includes(n))
    })
    const declared = [...base, ...owned]
    expect(new Set(declared).size, 'declared twice').toBe(declared.length)
    expect(new Set(documented()).size, 'documented twice').toBe(documented().length)
    expect([...declared].sort()).toEqual([...documented()].sort())
  })
})
