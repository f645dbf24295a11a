/**
 * Creating a topic from 3 examples (issue 31 item 6), offline on the cached embeddings of
 * bench:topics-offline (run that first): each trial makes a chatbot of 8 intents' topics (15 requests each,
 * in the window), 3 other intents' requests waiting in "other" (10 each), and one target intent's
 * requests waiting in "other" (10); creates a topic from 3 other requests of the target intent; counts
 * the target's requests moved (recall) and the others moved (false moves).
 *   npx tsx bench/topic-creation.ts [--baseline path/to/create-topic.ts]
 */
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import * as current from '../services/analysis/src/topics/create-topic.ts'
import type { WindowPoint } from '../services/analysis/src/topics/recluster.ts'
import { emptyTopicState, OTHER_TOPIC } from '../services/analysis/src/topics/topic-model.ts'
import { addTopic } from '../services/analysis/test/topic-fixtures.ts'
import { seededRandom } from './support/random.ts'
import { type Embedded, embedded, SETS } from './topics-offline.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const TRIALS = 60

function shuffle<T>(xs: T[], random: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[xs[i], xs[j]] = [xs[j]!, xs[i]!]
  }
  return xs
}

async function main() {
  const { values } = parseArgs({ options: { baseline: { type: 'string' } } })
  const decide = values.baseline
    ? ((await import(pathToFileURL(path.resolve(values.baseline)).href)) as typeof current)
        .decideTopicCreation
    : current.decideTopicCreation
  const cached = readdirSync(path.join(ROOT, '.cache/topics-offline'))
  for (const set of SETS.filter((s) => cached.some((f) => f.startsWith(`${s}-`)))) {
    const rows = (await embedded(set)).filter((r): r is Required<Embedded> => r.embedding !== undefined)
    const byIntent = new Map<string, Required<Embedded>[]>()
    for (const r of rows) byIntent.set(r.intent, [...(byIntent.get(r.intent) ?? []), r])
    const intents = [...byIntent.keys()].filter((i) => byIntent.get(i)!.length >= 15).sort()
    const random = seededRandom(31)
    let hits = 0
    let wanted = 0
    let falseMoves = 0
    let trialsWithFalse = 0
    for (let trial = 0; trial < TRIALS; trial++) {
      const chosen = shuffle([...intents], random).slice(0, 12)
      const state = emptyTopicState('bot')
      const window: WindowPoint[] = []
      const point = (r: Required<Embedded>, k: string, topicId: string): WindowPoint => ({
        conversationId: k,
        messageId: 'm',
        embedding: r.embedding,
        terms: r.terms,
        topicId,
      })
      chosen.slice(0, 8).forEach((intent, t) => {
        const members = shuffle([...byIntent.get(intent)!], random)
          .slice(0, 15)
          .map((r, i) => point(r, `topic-${t}-${i}`, `topic-${t}`))
        addTopic(state, `topic-${t}`, intent, members)
        window.push(...members)
      })
      for (const intent of chosen.slice(8, 11))
        window.push(
          ...shuffle([...byIntent.get(intent)!], random)
            .slice(0, 10)
            .map((r, i) => point(r, `other-${intent}-${i}`, OTHER_TOPIC)),
        )
      const target = shuffle([...byIntent.get(chosen[11]!)!], random)
      window.push(...target.slice(3, 13).map((r, i) => point(r, `target-${i}`, OTHER_TOPIC)))
      const created = decide(
        state,
        {
          topicId: 'new',
          label: 'New',
          examples: target.slice(0, 3).map((r) => ({ embedding: r.embedding, terms: r.terms })),
        },
        window,
      )
      if (!created.ok) throw new Error(created.reason)
      const moved = created.decision.reassigned.map((r) => r.conversationId)
      const good = moved.filter((c) => c.startsWith('target-')).length
      hits += good
      wanted += Math.min(10, target.length - 3)
      falseMoves += moved.length - good
      if (moved.length > good) trialsWithFalse++
    }
    console.log(
      `${set}: recall ${(hits / wanted).toFixed(3)} (${hits}/${wanted}), false moves ${falseMoves} (${(falseMoves / TRIALS).toFixed(2)} per creation; ${trialsWithFalse}/${TRIALS} creations with any)`,
    )
  }
}

await main()
