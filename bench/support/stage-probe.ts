import { mkdir, writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import path from 'node:path'

/**
 * The peak resident memory of this process while `fn` runs, sampled every 50 ms (the pipeline stages
 * run in the benchmark's own process). `process.resourceUsage().maxRSS` would be the peak of the whole
 * run, seeding included; sampling gives the stage's own.
 */
export async function withPeakRss<T>(fn: () => Promise<T>): Promise<{ result: T; peakRssMiB: number }> {
  let peak = process.memoryUsage.rss()
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss())
  }, 50)
  try {
    const result = await fn()
    peak = Math.max(peak, process.memoryUsage.rss())
    return { result, peakRssMiB: peak / 2 ** 20 }
  } finally {
    clearInterval(timer)
  }
}

/**
 * A CPU profile of this process while `fn` runs (V8's sampling profiler through the inspector, the same
 * format as `node --cpu-prof`), written as `dir`/stage.cpuprofile.
 */
export async function withCpuProfile<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.start')
  try {
    return await fn()
  } finally {
    const { profile } = await session.post('Profiler.stop')
    session.disconnect()
    await mkdir(dir, { recursive: true })
    await writeFile(path.join(dir, 'stage.cpuprofile'), JSON.stringify(profile))
  }
}
