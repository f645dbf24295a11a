/**
 * A trial's chatbots' topics and their labels, offline (helper lang2): the conversations of
 * bench/data/trials/trial6-es-en.json (a Spanish chatbot and a messy English one, written by hand for the
 * sixth trial, never tuned on) analysed by the service's analyzer (providers/semantic.ts: the request
 * gate, the model, the language, the terms), each chatbot placed a few conversations at a time and
 * re-clustered once as one window, as bench:topics-multiturn does, then grouped into themes; per topic its
 * label, size and keywords. The terms are taken two ways on the same embeddings: with the message's
 * language's function words left out (terms.ts, as the service does) and with winkNLP's English stop words
 * alone (as before lang2), so that both labellings are of the same run.
 *
 *   npx tsx bench/trial-topics.ts [--seed N] [--batch N]
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { createTermExtractor } from '../services/analysis/src/topics/terms.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { seededRandom } from './support/random.ts'
import { type AnalysedConversation, measure, place, recluster } from './topics-multiturn.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const TRIAL = path.join(ROOT, 'bench/data/trials/trial6-es-en.json')

interface Trial {
  readonly chatbots: {
    readonly key: string
    readonly name: string
    readonly conversations: { id: string; turns: { role: 'user' | 'assistant'; content: string }[] }[]
  }[]
}

const { values } = parseArgs({
  options: { seed: { type: 'string', default: '31' }, batch: { type: 'string', default: '5' } },
})
const trial = JSON.parse(readFileSync(TRIAL, 'utf8')) as Trial
const analyzer = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(ROOT, '.cache/models'),
  hubUrl: UNREACHABLE_HUB,
})
const english = createTermExtractor({})

for (const chatbot of trial.chatbots) {
  const withLanguage: AnalysedConversation[] = []
  const englishOnly: AnalysedConversation[] = []
  const languages = new Map<string, number>()
  for (const c of chatbot.conversations) {
    const results = await analyzer.analyzeMessages(
      c.turns.map((t, i) => ({ id: String(i), role: t.role, content: t.content })),
      {},
    )
    const messages = c.turns.map((t, i) => {
      const r = results[i]!
      if (r.language) languages.set(r.language, (languages.get(r.language) ?? 0) + 1)
      return {
        role: t.role,
        text: t.content,
        ...(r.embedding ? { embedding: r.embedding, terms: r.terms! } : {}),
      }
    })
    withLanguage.push({ id: c.id, set: chatbot.key, messages })
    englishOnly.push({
      id: c.id,
      set: chatbot.key,
      messages: messages.map((m) => (m.embedding ? { ...m, terms: english.terms(m.text) } : m)),
    })
  }
  console.log(
    `\n## ${chatbot.name}: ${chatbot.conversations.length} conversations; end users' languages ${[
      ...languages,
    ]
      .sort((a, b) => b[1] - a[1])
      .map(([l, n]) => `${l} ${n}`)
      .join(', ')}`,
  )
  for (const [name, conversations] of [
    ['English stop words only (before)', englishOnly],
    ["the message's language's function words left out (after)", withLanguage],
  ] as const) {
    const random = seededRandom(Number(values.seed))
    const order = [...conversations]
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[order[i], order[j]] = [order[j]!, order[i]!]
    }
    const placed = await place(order, Number(values.batch))
    const run = recluster(order, placed)
    const m = measure(order, run)
    console.log(`\n${name}: ${m.topics} topics, ${m.themes} themes`)
    const topic = (id: string, indent: string) => {
      const t = run.state.topics.get(id)!
      const size = m.topicList.find((x) => x.id === id)?.size ?? 0
      console.log(`${indent}- "${t.label}" (${size} requests): keywords ${t.keywords.join(', ')}`)
    }
    for (const { theme, conversations: n } of m.themeList) {
      console.log(`- theme "${theme.label}" (${n} conversations)`)
      for (const id of theme.topicIds) topic(id, '  ')
    }
    const themed = new Set(m.themeList.flatMap((t) => t.theme.topicIds))
    for (const t of m.topicList) if (!themed.has(t.id)) topic(t.id, '')
  }
}
await analyzer.close?.()
