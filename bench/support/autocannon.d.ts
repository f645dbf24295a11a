// The part of autocannon's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  interface Request {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string | Buffer
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request
  }
  interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    total: number
    p50: number
    p90: number
    p97_5: number
    p99: number
  }
  interface Result {
    duration: number
    connections: number
    errors: number
    timeouts: number
    resets: number
    mismatches: number
    non2xx: number
    '2xx': number
    statusCodeStats: Record<string, { count: number }>
    requests: Histogram
    latency: Histogram
    throughput: Histogram
  }
  interface Options {
    url: string
    connections?: number
    duration?: number
    amount?: number
    timeout?: number
    overallRate?: number
    headers?: Record<string, string>
    requests?: Request[]
  }
  interface Instance extends PromiseLike<Result> {
    stop(): void
  }
  function autocannon(opts: Options): Instance
  export default autocannon
  export type { Options, Result }
}
