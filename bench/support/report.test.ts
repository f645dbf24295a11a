import { describe, expect, it } from 'vitest'
import { parseBenchArgs } from './args.ts'
import type { LoadResult } from './load.ts'
import { analyticsVerdict, errorSummary, renderReport, TARGETS, verdict } from './report.ts'
import type { BenchResults } from './results.ts'
import { summarize } from './stats.ts'

function load(connections: number, requestsPerSecond: number, extra: Partial<LoadResult> = {}): LoadResult {
  return {
    connections,
    seconds: 10,
    ok: requestsPerSecond * 10,
    non2xx: 0,
    statusCodes: { '200': requestsPerSecond * 10 },
    errors: 0,
    timeouts: 0,
    requestsPerSecond,
    latency: { p50: 3, p99: 12, max: 40, mean: 4 },
    ...extra,
  }
}

const latency = (ms: number) => summarize([ms, ms, ms])

function results(overrides: Partial<BenchResults> = {}): BenchResults {
  return {
    machine: {
      cores: 2,
      cpuModel: 'Test CPU',
      memoryGiB: 8,
      node: 'v20.0.0',
      postgres: '18.4',
      kafka: '4.3.1',
      date: '2026-11-21T00:00:00.000Z',
      commit: 'abc1234',
      loadAverage: 0.2,
    },
    loadAverageAtEnd: 0.3,
    options: parseBenchArgs([]),
    postgresSettings: { shared_buffers: '1GB' },
    startedAt: '2026-11-21T00:00:00.000Z',
    finishedAt: '2026-11-21T00:15:00.000Z',
    ceilings: {
      http: [load(16, 20_000)],
      database: [
        {
          connections: 16,
          seconds: 10,
          ok: 30_000,
          errors: 0,
          requestsPerSecond: 3_000,
          latency: latency(5),
        },
        {
          connections: 64,
          seconds: 10,
          ok: 52_000,
          errors: 0,
          requestsPerSecond: 5_200,
          latency: latency(12),
        },
      ],
      kafka: {
        client: 'kafkajs',
        inFlight: 4,
        batchSize: 500,
        events: 100_000,
        seconds: 2,
        eventsPerSecond: 50_000,
        megabytesPerSecond: 80,
      },
      captureEvents: [
        { type: 'conversation.started', bytes: 500 },
        { type: 'conversation.messages-captured', bytes: 1_600 },
      ],
    },
    gateway: [
      { load: load(64, 4_000), rss: { maxMb: 150, lastMb: 140 } },
      {
        load: load(256, 5_500, { latency: { p50: 40, p99: 130, max: 300, mean: 45 } }),
        rss: { maxMb: 180, lastMb: 170 },
      },
    ],
    modes: [
      {
        mode: 'embedded',
        capture: [
          {
            load: load(1, 400),
            projectorBacklog: 3,
            projectorCaughtUpSeconds: 0.5,
            allCaughtUpSeconds: 2,
          },
          {
            load: load(16, 6_000, { non2xx: 7, statusCodes: { '200': 60_000, '503': 7 }, errors: 2 }),
            projectorBacklog: 900,
            projectorCaughtUpSeconds: 3,
            allCaughtUpSeconds: null,
          },
          {
            load: load(64, 1_500),
            rss: { maxMb: 420, lastMb: 400 },
            projectorBacklog: 0,
            projectorCaughtUpSeconds: 0,
            allCaughtUpSeconds: 4,
          },
        ],
        freshness: {
          rate: 3_000,
          rss: { maxMb: 512, lastMb: 480 },
          analysisBacklogAtEnd: 1_234,
          analysisCaughtUpSeconds: 7.5,
          load: load(64, 2_990, { latency: { p50: 8, p99: 70, max: 120, mean: 10 } }),
          latency: latency(120),
          probeCaptureLatency: latency(9),
          failures: 0,
        },
        pipeline: {
          seedSeconds: 12,
          projector: { events: 200_000, seconds: 10, eventsPerSecond: 20_000 },
          rebuild: { events: 1_000_001, seconds: 10, eventsPerSecond: 100_000 },
        },
      },
    ],
    queries: [
      {
        messages: 10_000_000,
        seedSeconds: 20,
        queries: [
          { label: 'overview, 30 days', url: '/o', kind: 'overview', latency: latency(30) },
          { label: 'sentiment by day, 365 days', url: '/s', kind: 'sentiment', latency: latency(61) },
          { label: 'overview, 90 days in the past', url: '/p', kind: 'past-overview', latency: latency(500) },
          {
            label: 'conversation list, first page of 20',
            url: '/c',
            kind: 'conversations',
            latency: latency(900),
          },
        ],
      },
    ],
    notes: [],
    ...overrides,
  }
}

describe('verdicts', () => {
  it('meets a minimum at the target and a maximum strictly below it', () => {
    expect(verdict(5_000, { atLeast: 5_000 })).toBe('met')
    expect(verdict(4_999, { atLeast: 5_000 })).toBe('missed')
    expect(verdict(49.9, { below: 50 })).toBe('met')
    expect(verdict(50, { below: 50 })).toBe('missed')
    expect(verdict(Number.NaN, { below: 50 })).toBe('missed')
  })

  it('judges the analytics target on the slowest overview or sentiment query at 10M, not the list nor a past range', () => {
    expect(analyticsVerdict(results())).toMatch(/^61\.0 ms \(sentiment by day, 365 days\) \*\*missed\*\*/)
    const small = results({ queries: [{ ...results().queries![0]!, messages: 1_000_000 }] })
    expect(analyticsVerdict(small)).toBe(
      `not measured at ${TARGETS.analyticsAtMessages.toLocaleString('en')} messages`,
    )
  })

  it('summarizes non-2xx responses by status, connection errors and timeouts', () => {
    expect(errorSummary(load(1, 10))).toBe('0')
    expect(
      errorSummary(load(1, 10, { statusCodes: { '200': 5, '429': 2, '503': 1 }, errors: 3, timeouts: 1 })),
    ).toBe('429×2, 503×1, connection errors 3, timeouts 1')
  })
})

describe('REPORT.md', () => {
  const report = renderReport(results(), 'The capture transaction waits on its commit.')

  it('heads with the machine, versions, date and commit', () => {
    for (const s of [
      '2 × Test CPU',
      '8 GiB',
      'v20.0.0',
      '18.4',
      'Apache Kafka 4.3.1',
      '2026-11-21T00:00:00.000Z',
      'abc1234',
    ]) {
      expect(report).toContain(s)
    }
    expect(report).not.toContain('machine was busy')
  })

  it('puts each target next to its figure with met or missed', () => {
    const targets = report.slice(report.indexOf('## Targets'), report.indexOf('## Ceilings'))
    expect(targets).toContain('5,200 captures/s **met**')
    expect(targets).toContain('5,500 req/s, p99 130.0 ms, errors 0 **missed**')
    expect(targets).toContain('1,500 req/s **missed**')
    expect(targets).toContain('120.0 ms at 2,990 req/s for 60 s **met**')
    expect(targets).toContain('20,000 events/s **met**')
    expect(targets).toContain('100,000 events/s (1,000,001 events) **met**')
  })

  it('gives the gateway alone its own table, and the memory of the service', () => {
    const row = report.split('\n').find((l) => l.startsWith('| 256 | 5,500 |'))!
    expect(row).toContain('| 180 MiB |')
    expect(report).toContain('max 512 MiB, 480 MiB at the end')
    expect(report).toContain(
      'Analysis was 1,234 jobs behind when the load stopped and had caught up 7.5 s later',
    )
  })

  it('gives each capture level as a ratio to the ceilings at the same concurrency, with its errors', () => {
    const row = report.split('\n').find((l) => l.startsWith('| 16 | 6,000 |'))!
    // 6,000 of 20,000 (HTTP), of 3,000 (database), 12,000 events/s of 50,000 (Kafka: not in embedded mode).
    expect(row).toContain('| 0.30 | 2.00 |')
    expect(row).toContain('503×7, connection errors 2')
    expect(row).toContain('not within the timeout')
    expect(report.split('\n').find((l) => l.startsWith('| 1 | 400 |'))).toContain('| — | — |')
  })

  it('says which analyzer the capture ran with, and flags any other than the language model', () => {
    const r = results()
    const withAnalyzer = (analyzer: string | null) =>
      renderReport({ ...r, modes: r.modes.map((m) => ({ ...m, analyzer })) })
    expect(withAnalyzer('local-embedding Xenova/all-MiniLM-L6-v2@q8 (ready)')).toContain(
      'Analysis with the language model, as `npm start` runs by default: local-embedding',
    )
    for (const other of [
      'local-embedding Xenova/all-MiniLM-L6-v2@q8 (loading)',
      'lexical v1 (ready)',
      null,
    ]) {
      expect(withAnalyzer(other)).toContain('**Analysis was not the language model**')
    }
    expect(report).not.toContain('language model**')
  })

  it('flags a busy machine and appends the hand-written findings', () => {
    const r = results()
    expect(renderReport({ ...r, machine: { ...r.machine, loadAverage: 5 } })).toContain('machine was busy')
    // The load at the end is the benchmark's own: reported, not taken for other work.
    expect(renderReport({ ...r, loadAverageAtEnd: 5 })).not.toContain('machine was busy')
    expect(report.trimEnd().endsWith('The capture transaction waits on its commit.')).toBe(true)
  })
})
