/**
 * The CPU profiles `bench/pipeline-window.ts --profile DIR` wrote (one per thread of the service), summed over
 * one window only: self time by source module of the bundle (the `// path` markers esbuild writes), by
 * function, and inclusive time under the given functions.
 *
 *   npx tsx bench/profile-window.ts DIR FROM_US TO_US [--messages N] [--top 25] [--under name,name]
 *
 * FROM_US / TO_US: the window as pipeline-window prints it ("profile window"). `--messages`: divide by the
 * end-user messages of the window (ms per message instead of ms). Times are samples × the interval: near
 * the thread's CPU time, not its wall time, on a loaded machine.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    messages: { type: 'string', default: '1' },
    top: { type: 'string', default: '25' },
    under: { type: 'string', default: '' },
    /** The profiles' sampling interval (node's --cpu-prof-interval, 1,000 µs by default). */
    interval: { type: 'string', default: '1000' },
  },
})
const [dir, fromArg, toArg] = positionals
if (!dir || !fromArg || !toArg) throw new Error('usage: profile-window.ts DIR FROM_US TO_US')
const from = Number(fromArg)
const to = Number(toArg)
const perMessage = Number(values.messages)
const top = Number(values.top)
const intervalUs = Number(values.interval)
const under = values.under ? values.under.split(',') : []

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

/** Each bundle's module boundaries: the line where each `// path` marker starts its module. */
const modulesOf = new Map<string, { line: number; name: string }[]>()
function moduleAt(url: string, line: number): string {
  if (!url) return '(v8)'
  if (url.includes('node_modules/')) return url.replace(/.*node_modules\/((?:@[^/]+\/)?[^/]+).*/, '$1')
  if (url.startsWith('node:')) return 'node internals'
  const file = url.replace(/^file:\/\//, '')
  let marks = modulesOf.get(file)
  if (!marks) {
    marks = []
    try {
      for (const [i, text] of readFileSync(file, 'utf8').split('\n').entries()) {
        const m = /^\/\/ ((?:libs|services|node_modules)\/\S+)$/.exec(text)
        if (m) marks.push({ line: i, name: m[1]! })
      }
    } catch {}
    modulesOf.set(file, marks)
  }
  let name = path.basename(file)
  for (const mark of marks) {
    if (mark.line > line) break
    name = mark.name
  }
  return name.replace(/^node_modules\/((?:@[^/]+\/)?[^/]+).*/, '$1')
}

const fmt = (us: number) =>
  perMessage > 1 ? `${(us / 1000 / perMessage).toFixed(3)} ms/msg` : `${(us / 1000).toFixed(0)} ms`

for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
  const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const selfByNode = new Map<number, number>()
  let t = profile.startTime
  for (const [i, id] of profile.samples.entries()) {
    const delta = profile.timeDeltas[i] ?? 0
    t += delta
    if (t < from || t > to) continue
    // Counted, not timed: on a loaded machine a thread waiting for a core takes its next sample late, and
    // the delta to it would count the wait; one sample per interval of the thread running is its CPU.
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + intervalUs)
  }
  let busy = 0
  const byModule = new Map<string, number>()
  const byFunction = new Map<string, number>()
  const underTotals = new Map<string, number>()
  for (const [id, us] of selfByNode) {
    const node = byId.get(id)!
    const { functionName, url, lineNumber } = node.callFrame
    if (functionName === '(idle)') continue
    busy += us
    const mod = moduleAt(url, lineNumber)
    byModule.set(mod, (byModule.get(mod) ?? 0) + us)
    const fn = `${functionName || '(anonymous)'} [${mod}]`
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us)
    if (under.length > 0) {
      const seen = new Set<string>()
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const name = byId.get(at)!.callFrame.functionName
        if (under.includes(name) && !seen.has(name)) {
          seen.add(name)
          underTotals.set(name, (underTotals.get(name) ?? 0) + us)
        }
      }
    }
  }
  if (busy === 0) continue
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top)
  console.log(`\n${file}: busy ${fmt(busy)}`)
  console.log('  by module (self):')
  for (const [name, us] of sorted(byModule)) console.log(`    ${fmt(us).padStart(16)}  ${name}`)
  console.log('  by function (self):')
  for (const [name, us] of sorted(byFunction)) console.log(`    ${fmt(us).padStart(16)}  ${name}`)
  if (under.length > 0) {
    console.log('  under (inclusive):')
    for (const [name, us] of sorted(underTotals)) console.log(`    ${fmt(us).padStart(16)}  ${name}`)
  }
}
