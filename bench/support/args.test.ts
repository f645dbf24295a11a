import { describe, expect, it } from 'vitest'
import { parseBenchArgs, UsageError } from './args.ts'

describe('npm run bench arguments', () => {
  it('runs everything at full size by default', () => {
    const o = parseBenchArgs([])
    expect(o.quick).toBe(false)
    expect(o.modes).toEqual(['embedded', 'kafka'])
    expect(o.sections).toEqual(['ceilings', 'gateway', 'capture', 'pipeline', 'queries', 'clients'])
    expect(o.concurrency).toEqual([1, 16, 64, 256])
    expect(o.rebuildEvents).toBe(1_000_000)
    expect(o.queryScales).toEqual([1_000_000, 10_000_000])
    expect(o.outDir).toBe('bench')
  })

  it('--quick picks small sizes and its own output directory; explicit options still win', () => {
    const quick = parseBenchArgs(['--quick'])
    expect(quick.rebuildEvents).toBeLessThan(100_000)
    expect(quick.durationSeconds).toBeLessThan(parseBenchArgs([]).durationSeconds)
    expect(quick.outDir).toBe('bench/quick')
    const tuned = parseBenchArgs([
      '--quick',
      '--duration',
      '5',
      '--rebuild-events',
      '1_000',
      '--out',
      '/tmp/x',
    ])
    expect(tuned.durationSeconds).toBe(5)
    expect(tuned.rebuildEvents).toBe(1_000)
    expect(tuned.outDir).toBe('/tmp/x')
  })

  it('--explain-slow takes the threshold in milliseconds; none by default', () => {
    expect(parseBenchArgs([]).explainSlowMs).toBeUndefined()
    expect(parseBenchArgs(['--explain-slow', '50']).explainSlowMs).toBe(50)
    expect(parseBenchArgs(['--explain-slow', '0']).explainSlowMs).toBe(0)
  })

  it('keeps the projector measurement within the events the rebuild seeds', () => {
    expect(parseBenchArgs(['--rebuild-events', '5000', '--projector-events', '9000']).projectorEvents).toBe(
      5000,
    )
  })

  it('takes lists, and modes and sections in their canonical order', () => {
    const o = parseBenchArgs(['--modes', 'kafka', '--only', 'queries,capture', '--concurrency', '2, 8'])
    expect(o.modes).toEqual(['kafka'])
    expect(o.sections).toEqual(['capture', 'queries'])
    expect(o.concurrency).toEqual([2, 8])
  })

  it.each([
    [['--modes', 'docker']],
    [['--only', 'everything']],
    [['--concurrency', '1,x']],
    [['--duration', '0']],
    [['--duration', '-3']],
    [['--rebuild-events', '1.5']],
    [['--explain-slow', 'slow']],
    [['--concurrency', '']],
    [['--frobnicate']],
    [['stray']],
  ])('refuses %j with a usage error', (argv) => {
    expect(() => parseBenchArgs(argv)).toThrow(UsageError)
  })
})
