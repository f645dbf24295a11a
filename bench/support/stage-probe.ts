import { execFileSync } from 'node:child_process'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
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

/**
 * CPU seconds the PostgreSQL server has used so far (Linux only; undefined elsewhere): the postmaster's
 * own and its waited-for children's (backends that exited), plus every live child's. Taken before and
 * after a stage, it is the database's share of the stage's work, which a loaded machine stretches in
 * time but not in CPU.
 */
export async function postgresCpuSeconds(dataDirectory: string): Promise<number | undefined> {
  try {
    const postmaster = Number(
      (await readFile(path.join(dataDirectory, 'postmaster.pid'), 'utf8')).split('\n')[0],
    )
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
    const stat = async (pid: number) => {
      // Fields after the command (which may hold spaces), from field 3 on: utime is 14, stime 15,
      // cutime 16, cstime 17 (1-based over the whole line).
      const text = await readFile(`/proc/${pid}/stat`, 'utf8')
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
      return {
        ppid: Number(fields[1]),
        own: Number(fields[11]) + Number(fields[12]),
        children: Number(fields[13]) + Number(fields[14]),
      }
    }
    let total = 0
    for (const entry of await readdir('/proc')) {
      const pid = Number(entry)
      if (!Number.isInteger(pid)) continue
      const s = await stat(pid).catch(() => undefined)
      if (!s) continue
      if (pid === postmaster) total += s.own + s.children
      else if (s.ppid === postmaster) total += s.own
    }
    return total / ticks
  } catch {
    return undefined
  }
}
