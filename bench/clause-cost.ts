/**
 * What rules-v10's clauses cost the model (issue 31, topics9's clauseAsks): the texts the language model
 * embeds per end-user message on multi-turn traffic, and how many of them the clauses of later requests
 * add. The open signal sets' conversations (the blind ones never loaded), each analysed as one job is
 * (providers/semantic.ts, then the signals' units: signals/scorer.ts, both through the analyzer's embedding
 * cache, as the job runner asks the analyzer thread: SemanticAbilities.analyzeAndEmbed), counting every text
 * the model is given. A text first asked for by clauseAsks (told by the call's stack) is the clauses'; it is
 * shared when the signals then ask for the same text (a sentence that is a clause): without the clauses the
 * signals would have embedded it anyway. The clauses' own cost is the rest.
 *
 *   npx tsx bench/clause-cost.ts [-- --sets development,fresh2]
 */
import { createHash } from 'node:crypto'
import { loadavg } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { SignalScorer } from '../services/analysis/src/signals/scorer.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { type LabelledConversation, loadSignalsSet, openSignalsSets } from './quality/signals.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const { values } = parseArgs({ options: { sets: { type: 'string' } } })
const only = values.sets ? new Set(values.sets.split(',')) : undefined
// Never a blind set, by its flag or by its name (fresh19 to fresh33 are the lead's).
const sets = openSignalsSets().filter(
  (s) =>
    !/fresh(19|20|21|22|23|24|25|26|27|28|29|30|31|32|33)\.json$/.test(s.file) && (!only || only.has(s.name)),
)

const analyzer = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(ROOT, '.cache/models'),
  hubUrl: UNREACHABLE_HUB,
})
const scorer = new SignalScorer(analyzer.semantic)
// The anchors first: their texts are not the traffic's.
await scorer.prepare([{ id: 'x', role: 'user', content: 'hello' }], undefined)

const embedded = new Map<string, 'clauses' | 'other'>()
/** Texts first embedded for the clauses, then asked for again by something else (the signals' units). */
const shared = new Set<string>()
let counting = false
const embed = analyzer.model.embed.bind(analyzer.model)
analyzer.model.embed = async (texts: readonly string[]) => {
  if (counting) {
    const by = new Error().stack?.includes('clauseAsks') ? 'clauses' : 'other'
    for (const t of texts) if (!embedded.has(t)) embedded.set(t, by)
  }
  return embed(texts)
}
const cachedEmbed = analyzer.semantic.embedTexts
const asked = async (texts: readonly string[]) => {
  for (const t of texts) if (embedded.get(t) === 'clauses') shared.add(t)
  return cachedEmbed(texts)
}

console.log(
  'set             conversations  end-user msgs  model texts  per msg  clauses: texts (shared with signals)',
)
/** Every result (which messages make a topic, with what embedding and terms; sentiment, emotions) and signal unit vector. */
const digest = createHash('sha256')
const total = { conversations: 0, users: 0, texts: 0, clauses: 0, shared: 0, cpuMs: 0 }
for (const set of sets) {
  const conversations: LabelledConversation[] = loadSignalsSet(set.file)
  embedded.clear()
  shared.clear()
  let users = 0
  counting = true
  const cpu = process.cpuUsage()
  for (const c of conversations) {
    const messages = c.messages.map(([role, content], i) => ({ id: String(i), role, content }))
    users += messages.filter((m) => m.role === 'user').length
    const prepared = await scorer.prepare(messages, undefined)
    const results = await analyzer.analyzeMessages(messages, {})
    const embeddings = await asked(prepared.texts)
    for (const r of results) {
      const { embedding, slotQuestion, anchorSimilarities, ...rest } = r
      digest.update(JSON.stringify(rest))
      for (const v of [embedding, slotQuestion, anchorSimilarities?.social, anchorSimilarities?.request])
        digest.update(v ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : '-')
    }
    for (const v of embeddings) digest.update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))
  }
  counting = false
  const used = process.cpuUsage(cpu)
  total.cpuMs += (used.user + used.system) / 1000
  const clauses = [...embedded.values()].filter((by) => by === 'clauses').length
  total.conversations += conversations.length
  total.users += users
  total.texts += embedded.size
  total.clauses += clauses
  total.shared += shared.size
  console.log(
    `${set.name.padEnd(16)}${String(conversations.length).padStart(13)}${String(users).padStart(15)}${String(embedded.size).padStart(13)}${(embedded.size / users).toFixed(3).padStart(9)}  ${clauses} (${shared.size})`,
  )
}
const own = total.clauses - total.shared
console.log(
  `all             ${String(total.conversations).padStart(13)}${String(total.users).padStart(15)}${String(total.texts).padStart(13)}${(total.texts / total.users).toFixed(3).padStart(9)}  ${total.clauses} (${total.shared})`,
)
console.log(
  `CPU (this process, the model's threads included) ${(total.cpuMs / total.users).toFixed(2)} ms per end-user message, load ${loadavg()[0]!.toFixed(1)}; the clauses' own texts: ${own}, ${(own / total.users).toFixed(3)} per end-user message, ${((own / (total.texts - own)) * 100).toFixed(1)} % more model texts than without them; results digest ${digest.digest('hex').slice(0, 16)}`,
)
