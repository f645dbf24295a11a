/**
 * What the language model is asked per end-user message on a quality set, as the job runner asks it (one job
 * per conversation, as bench:quality captures them): each text the model runs, by kind (an end user's whole
 * message, one of its sentences, an assistant's unit, a clause, an anchor), its tokens, and texts asked twice.
 * The analyzer runs in this thread (no database): exact counts on a busy machine. Ends with a digest of every
 * result and cue (vectors by their bytes), to show that a change leaves them bit for bit (bench/FINDINGS.md, perf12).
 *
 *   npx tsx bench/model-texts.ts [--set dstc11|clinc150] [--limit N]
 */
import { createHash } from 'node:crypto'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { AutoTokenizer } from '@huggingface/transformers'
import type { MessageToAnalyze } from '../services/analysis/src/analyzer.ts'
import { EMBEDDING_MODEL_ID } from '../services/analysis/src/providers/embedding-model.ts'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { sentencesOf } from '../services/analysis/src/signals/cues.ts'
import { SignalScorer } from '../services/analysis/src/signals/scorer.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { conversationOf, loadSet, type SetName } from './quality/datasets.ts'
import { seededRandom } from './support/random.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: {
    set: { type: 'string', default: 'dstc11' },
    limit: { type: 'string' },
    data: { type: 'string', default: path.join(ROOT, '../shared/data') },
  },
})

const analyzer = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(ROOT, '.cache/models'),
  hubUrl: UNREACHABLE_HUB,
})
const tokenizer = await AutoTokenizer.from_pretrained(EMBEDDING_MODEL_ID)
const tokensOf = (text: string) =>
  (
    tokenizer(text.slice(0, 1_000), {
      truncation: true,
      max_length: 128,
      return_tensor: false,
    }) as unknown as {
      input_ids: number[]
    }
  ).input_ids.length

const asked: string[] = []
const model = analyzer.model as { embed: (t: readonly string[]) => Promise<Float32Array[]> }
const embed = model.embed.bind(model)
let calls = 0
model.embed = async (texts) => {
  calls++
  asked.push(...texts)
  return embed(texts)
}
const scorer = new SignalScorer(analyzer.semantic)
// The anchors first, apart: what every process embeds once.
await scorer.prepare([], undefined)
const anchorTexts = asked.length
asked.length = 0
calls = 0

const set = loadSet(values.set as SetName, values.data, {
  seed: 1,
  ...(values.limit ? { limit: Number(values.limit) } : {}),
})
const random = seededRandom(2)
const conversations = set.requests.map((r, i) => conversationOf(r.text, i, { greetingShare: 0.3, random }))
const wholes = new Set<string>()
const sentences = new Set<string>()
const assistants = new Set<string>()
let userMessages = 0
let withTerms = 0
const digest = createHash('sha256')
const bytesOf = (_: string, v: unknown) =>
  v instanceof Float32Array || v instanceof Float64Array
    ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')
    : v
for (const conversation of conversations) {
  const messages: MessageToAnalyze[] = conversation.map((m, i) => ({
    ...m,
    ...(i === 0 ? { turnBefore: {} } : {}),
  }))
  for (const m of conversation) {
    if (m.role === 'user') {
      userMessages++
      wholes.add(m.content.trim())
      for (const s of sentencesOf(m.content.trim())) sentences.add(s)
    } else assistants.add(m.content.trim())
  }
  const prepared = await scorer.prepare(messages, undefined)
  const { results, embeddings } = await analyzer.semantic.analyzeAndEmbed(messages, {}, prepared.texts)
  const cues = prepared.cues(embeddings, results)
  withTerms += results.filter((r) => r.terms !== undefined).length
  digest.update(JSON.stringify({ results, cues }, bytesOf))
}

const kinds = new Map<string, { texts: number; tokens: number }>()
const seen = new Map<string, number>()
for (const text of asked) seen.set(text, (seen.get(text) ?? 0) + 1)
for (const text of asked) {
  const kind = wholes.has(text)
    ? 'end user, whole message'
    : sentences.has(text)
      ? 'end user, sentence'
      : assistants.has(text)
        ? 'assistant, whole'
        : 'other (assistant sentence, clause)'
  const k = kinds.get(kind) ?? { texts: 0, tokens: 0 }
  k.texts++
  k.tokens += tokensOf(text)
  kinds.set(kind, k)
}
const twice = [...seen.values()].filter((n) => n > 1).length
console.log(`${set.name}: ${conversations.length} conversations, ${userMessages} end-user messages`)
console.log(`  results with a topic's terms    ${withTerms}`)
console.log(`  anchors (once a process)        ${anchorTexts} texts`)
console.log(`  model calls                     ${calls} (${(asked.length / calls).toFixed(2)} texts a call)`)
console.log(
  `  texts run                       ${asked.length} (${(asked.length / userMessages).toFixed(3)} per end-user message)`,
)
console.log(`  texts run more than once        ${twice}`)
let tokens = 0
for (const [kind, k] of kinds) {
  tokens += k.tokens
  console.log(
    `  ${kind.padEnd(34)} ${String(k.texts).padStart(5)} texts, ${(k.tokens / k.texts).toFixed(1)} tokens each, ${(k.tokens / userMessages).toFixed(2)} tokens per end-user message`,
  )
}
console.log(
  `  tokens run                      ${tokens} (${(tokens / userMessages).toFixed(1)} per end-user message)`,
)
console.log(`  digest of results and cues      ${digest.digest('hex').slice(0, 16)}`)
