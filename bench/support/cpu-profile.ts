import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'

export interface CpuProfileSummary {
  readonly file: string
  /** Sampled time, idle excluded. */
  readonly busyMs: number
  /** Self time by where the code comes from: an npm package, node's internals, our workspaces, GC. */
  readonly byOrigin: { name: string; ms: number }[]
  /** Functions with the most self time. */
  readonly topFunctions: { name: string; ms: number }[]
}

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount?: number
}

interface Profile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
}

/** Summarizes the (first) .cpuprofile that `node --cpu-prof` wrote into `dir`. */
export async function summarizeCpuProfile(dir: string, top = 15): Promise<CpuProfileSummary | undefined> {
  const files = (await readdir(dir).catch(() => [])).filter((f) => f.endsWith('.cpuprofile'))
  if (files.length === 0) return undefined
  const file = path.join(dir, files[0]!)
  const profile = JSON.parse(await readFile(file, 'utf8')) as Profile
  const msPerSample = (profile.endTime - profile.startTime) / 1_000 / Math.max(1, profile.samples.length)
  const byOrigin = new Map<string, number>()
  const byFunction = new Map<string, number>()
  let busyMs = 0
  for (const node of profile.nodes) {
    const ms = (node.hitCount ?? 0) * msPerSample
    if (ms === 0 || node.callFrame.functionName === '(idle)') continue
    busyMs += ms
    const origin = originOf(node.callFrame)
    byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + ms)
    const where = node.callFrame.url
      ? ` ${shortUrl(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`
      : ''
    const name = `${node.callFrame.functionName || '(anonymous)'}${where}`
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms)
  }
  const sorted = (m: Map<string, number>) =>
    [...m].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms)
  return {
    file,
    busyMs,
    byOrigin: sorted(byOrigin).slice(0, top),
    topFunctions: sorted(byFunction).slice(0, top),
  }
}

/** npm package, node internals, our own code (libs/services in the bundle), or a V8 pseudo-frame. */
export function originOf(frame: { functionName: string; url: string }): string {
  const { url, functionName } = frame
  if (!url) return functionName.startsWith('(') ? functionName : '(native)'
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)
  if (pkg) return pkg[1]!
  if (url.startsWith('node:')) return 'node internals'
  return 'our code'
}

function shortUrl(url: string): string {
  const pkg = url.match(/node_modules\/(.*)$/)
  if (pkg) return pkg[1]!
  return url.replace(/^file:\/\/.*?\/(dist|libs|services)\//, '$1/')
}
