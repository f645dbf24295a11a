/**
 * npx tsx bench/frustration-shouting.ts [--units]: signals-v64's shouting (cues.ts, shoutsOf; detect.ts,
 * frustrationShouted) swept over its three bounds on the development sets' replay store (bench/.cache/
 * signals-replay.json, signals-replay.ts --score at v63 or later; never a blind set): frustration's errors by half
 * for each bound, the others held at the shipped values, beside the rule left out (no unit shouts). --units lists
 * the end users' units written mostly in capitals with the head, margin and displeasure on them and their
 * conversation's label (issue 32, helper frust11). MiniLM is uncased: "THIS IS THE THIRD TIME" reads as
 * "this is the third time".
 */
import { parseArgs } from 'node:util'
import { SHOUT_LETTERS, SHOUT_SHARE, shoutsOf, unitsOf } from '../services/analysis/src/signals/cues.ts'
import { THRESHOLDS } from '../services/analysis/src/signals/detect.ts'
import {
  developmentTexts,
  loadReplayStore,
  OLDER_HALF,
  replaySignals,
  type ScoredConversation,
} from './quality/signals-replay.ts'

const { values } = parseArgs({ options: { units: { type: 'boolean', default: false } } })
const store = loadReplayStore()
const texts = developmentTexts()
/** Each end-user message's units' texts, by conversation and message (unitsOf, as the cues were scored). */
const unitTexts = new Map(
  store.conversations.map((c) => [
    c,
    texts.get(`${c.set} ${c.id}`)!.map(([role, content]) => unitsOf({ role: role as 'user', content })),
  ]),
)

/** The store with each unit's shouting read again at these bounds (none at all: `letters` Infinity). */
function withShouting(letters: number, share: number): ScoredConversation[] {
  return store.conversations.map((c) => ({
    ...c,
    messages: c.messages.map((m, i) => {
      const units = m.cues?.frustrationUnits
      if (m.role !== 'user' || !units) return m
      const frustrationUnits = units.map((u, k) => {
        const { shouts: _, ...rest } = u
        return shoutsOf(unitTexts.get(c)![i]![k]!, letters, share) ? { ...rest, shouts: true as const } : rest
      })
      return { ...m, cues: { ...m.cues!, frustrationUnits } }
    }),
  }))
}

function frustrationErrors(conversations: readonly ScoredConversation[], head: number) {
  const { counts } = replaySignals(conversations, new Map([['frustrationShouted', head]]))
  const all = replaySignals(conversations, new Map([['frustrationShouted', head]])).errors
  const other = (half: string) => all.filter((e) => e.half === half && e.signal !== 'frustration').length
  const f = (half: 'older' | 'newer') => `${counts[half].frustration!.fp}+${counts[half].frustration!.fn}`
  return `older ${f('older')} (others ${other('older')}), newer ${f('newer')} (others ${other('newer')})`
}

if (values.units) {
  const letters = (s: string) => s.match(/\p{L}/gu)?.length ?? 0
  const capitals = (s: string) => s.match(/\p{Lu}/gu)?.length ?? 0
  for (const c of store.conversations) {
    for (const [i, m] of c.messages.entries()) {
      if (m.role !== 'user' || !m.cues?.frustrationUnits) continue
      for (const [k, u] of m.cues.frustrationUnits.entries()) {
        const text = unitTexts.get(c)![i]![k]!
        const n = letters(text)
        if (n < 4 || capitals(text) / n < 0.5) continue
        console.log(
          `${OLDER_HALF.has(c.set) ? 'older' : 'newer'} ${c.labels.includes('frustration') ? 'FRUST' : 'none '} ${c.set} ${c.id} #${i}.${k} shouts ${shoutsOf(text)} head ${u.head} margin ${u.margin} displeasure ${u.displeasure} ${JSON.stringify(text.slice(0, 80))}`,
        )
      }
    }
  }
  process.exit(0)
}

console.log(`frustration fp+fn; no unit shouts: ${frustrationErrors(withShouting(Infinity, 1), 1)}`)
const shipped = { letters: SHOUT_LETTERS, share: SHOUT_SHARE, head: THRESHOLDS.frustrationShouted }
for (const letters of [4, 6, 8, 10, 12, 16, 20, 30])
  console.log(`letters ${letters}: ${frustrationErrors(withShouting(letters, shipped.share), shipped.head)}`)
for (const share of [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1])
  console.log(`share ${share}: ${frustrationErrors(withShouting(shipped.letters, share), shipped.head)}`)
const atShipped = withShouting(shipped.letters, shipped.share)
for (const head of [0, 0.1, 0.15, 0.3, 0.4, 0.42, 0.5, 0.6, 0.7, 0.8, 0.81, 0.9, 0.95])
  console.log(`head ${head}: ${frustrationErrors(atShipped, head)}`)
