/**
 * CPU time of processes and threads from Linux's /proc (clock ticks of 10 ms; empty or 0 elsewhere): the
 * figure to compare on a shared machine, where wall-clock rates follow the other sessions' load.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

const TICKS = 100

export interface ThreadTime {
  /** The thread's name (its comm) and id, e.g. `node#1234`. */
  readonly name: string
  readonly seconds: number
}

/** Each thread of process `pid` (this one by default): its name and CPU seconds so far. */
export function threadTimes(pid: number | 'self' = 'self'): Map<string, ThreadTime> {
  const out = new Map<string, ThreadTime>()
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      out.set(tid, { name: `${name}#${tid}`, seconds: (Number(fields[11]) + Number(fields[12])) / TICKS })
    }
  } catch {
    // Not Linux, or the process has exited.
  }
  return out
}

/** The CPU each thread used between two threadTimes(), busiest first; `main` is the thread whose id is `pid`. */
export function busiestThreads(
  before: Map<string, ThreadTime>,
  after: Map<string, ThreadTime>,
  pid: number = process.pid,
): { name: string; main: boolean; seconds: number }[] {
  return [...after]
    .map(([tid, t]) => ({
      name: t.name,
      main: Number(tid) === pid,
      seconds: t.seconds - (before.get(tid)?.seconds ?? 0),
    }))
    .sort((a, b) => b.seconds - a.seconds)
}

/**
 * The CPU seconds of the embedded Postgres so far: its postmaster and its processes (the pool's backends
 * live through a set's run), and the processes of it that have exited (Linux: /proc; 0 elsewhere).
 */
export function postgresCpuSeconds(dataDir: string): number {
  try {
    const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
    let ticks = 0
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      let stat: string
      try {
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      } catch {
        continue
      }
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const own = Number(pid) === postmaster
      if (!own && Number(fields[1]) !== postmaster) continue
      ticks += Number(fields[11]) + Number(fields[12])
      if (own) ticks += Number(fields[13]) + Number(fields[14])
    }
    return ticks / TICKS
  } catch {
    return 0
  }
}
