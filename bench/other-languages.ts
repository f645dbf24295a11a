/**
 * Other languages' social messages in the topic gate (issue 31 item 4, helper topics21): what topics/social-formulas.ts
 * changes on the analyzer's gate path (requestEmbeddings, then clauseAsks with FOLLOW_UP_MARGIN for a later message),
 * without it and with it, on the same embeddings.
 *
 *   npm run bench:other-languages
 *
 * Choose: trial6's Spanish chatbot (bench/data/trials, hand-written for a trial, never tuned on before). Confirm: the
 * probe bench/data/probes/social-other-languages.json (written before the rule was read on it: five languages, half
 * social acts asked after a request, half requests asked first and second), with each half's precision. What it must
 * not change: English. Every text of the signal sets' later messages, CLINC150's validation and test requests and
 * DSTC11's is searched for a clause the rule reads (without one the gate's path is the same, so nothing can change);
 * the texts with one are run both ways and listed. Also the model alone: how the probe's messages read against the
 * English anchors as a whole (social from SOCIAL_MARGIN on), and their detected language (language.ts).
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { detectLanguage } from '../services/analysis/src/language.ts'
import { loadEmbeddingModel } from '../services/analysis/src/providers/embedding-model.ts'
import { ownPlanClausesOf } from '../services/analysis/src/topics/own-plans.ts'
import {
  clausesOf,
  SOCIAL_MARGIN,
  type SocialFormula,
  socialMargin,
} from '../services/analysis/src/topics/requests.ts'
import { isSocialFormula } from '../services/analysis/src/topics/social-formulas.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import {
  clincRequests,
  dstc11Requests,
  laterUserMessages,
  signalsSetHalves,
  type Text,
} from './support/texts.ts'
import { gateAnchors, makesTopic, reportWithoutAndWith } from './support/topic-gate.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const model = await loadEmbeddingModel({
  modelDir: TEST_MODEL_DIR,
  cacheDir: TEST_MODEL_DIR,
  hubUrl: UNREACHABLE_HUB,
})
const anchors = await gateAnchors(model)
const NONE: SocialFormula = () => false
const rules = (formula: SocialFormula) => ({ plans: ownPlanClausesOf, formula })

interface Trial {
  readonly chatbots: {
    readonly key: string
    readonly conversations: { id: string; turns: { role: string; content: string }[] }[]
  }[]
}
const trial = JSON.parse(
  readFileSync(path.join(ROOT, 'bench/data/trials/trial6-es-en.json'), 'utf8'),
) as Trial
function trialMessages(key: string, later: boolean): Text[] {
  const bot = trial.chatbots.find((c) => c.key === key)!
  return bot.conversations.flatMap((c) => {
    const users = c.turns.filter((t) => t.role === 'user').map((t) => t.content)
    return (later ? users.slice(1) : users.slice(0, 1)).map((text) => ({
      text,
      where: `trial6-${key}/${c.id}`,
    }))
  })
}

interface Probe {
  readonly languages: Record<string, { social: string[]; request: string[] }>
}
const probe = JSON.parse(
  readFileSync(path.join(ROOT, 'bench/data/probes/social-other-languages.json'), 'utf8'),
) as Probe
const probeOf = (half: 'social' | 'request'): Text[] =>
  Object.entries(probe.languages).flatMap(([lang, l]) =>
    l[half].map((text) => ({ text, where: `probe-${lang}` })),
  )

const count = (xs: boolean[]) => xs.filter(Boolean).length
const lists: string[] = []

console.log('## The model alone: the probe as a whole against the English anchors\n')
console.log(
  '| language | social read social (margin ≥ 0.2) | requests read social | detected as the language |',
)
console.log('|---|--:|--:|--:|')
for (const [lang, l] of Object.entries(probe.languages)) {
  const margins = async (xs: string[]) =>
    (await model.embed(xs)).map((v) => socialMargin(v, { social: anchors.social, request: anchors.request }))
  const social = await margins(l.social)
  const request = await margins(l.request)
  const detected = [...l.social, ...l.request].filter((t) => detectLanguage(t) === lang).length
  console.log(
    `| ${lang} | ${count(social.map((m) => m >= SOCIAL_MARGIN))}/${l.social.length} | ${count(request.map((m) => m >= SOCIAL_MARGIN))}/${l.request.length} | ${detected}/${l.social.length + l.request.length} |`,
  )
}

const sets = [
  { name: 'trial6 Spanish, later messages (choose)', items: trialMessages('es', true), later: true },
  { name: 'trial6 Spanish, first messages (choose)', items: trialMessages('es', false), later: false },
  { name: 'probe, social, asked after a request (confirm)', items: probeOf('social'), later: true },
  { name: 'probe, requests, asked second (confirm)', items: probeOf('request'), later: true },
  { name: 'probe, requests, asked first (confirm)', items: probeOf('request'), later: false },
  { name: 'trial6 messy English, later messages', items: trialMessages('en', true), later: true },
  { name: 'trial6 messy English, first messages', items: trialMessages('en', false), later: false },
]
console.log('\n## The gate, without → with the social formulae\n')
lists.push(
  ...(await reportWithoutAndWith(
    model,
    anchors,
    sets,
    { without: rules(NONE), with: rules(isSocialFormula) },
    misread,
  )),
)

/** Trial6's Spanish later messages, each with whether it makes a topic; of the probe, what the rule leaves wrong. */
function misread(set: (typeof sets)[number], _: readonly boolean[], after: readonly boolean[]): string[] {
  if (!set.name.startsWith('probe') && !set.name.includes('Spanish, later')) return []
  return set.items.flatMap((item, i) =>
    after[i] === set.name.includes('social') || set.name.includes('Spanish')
      ? [`- ${set.name}, ${after[i] ? 'topic' : 'none'}: ${JSON.stringify(item.text)} (${item.where})`]
      : [],
  )
}

console.log('\n## English: texts with a clause the rule reads (only those can change)\n')
console.log('| set | messages | with a formula clause | topic lost, asked as the set asks |')
console.log('|---|--:|--:|--:|')
const halves = signalsSetHalves()
const english = [
  { name: 'signal sets, older half, later messages', items: laterUserMessages(halves.older), later: true },
  { name: 'signal sets, newer half, later messages', items: laterUserMessages(halves.newer), later: true },
  {
    name: 'CLINC150 validation and test, requests',
    items: [...clincRequests('val'), ...clincRequests('test')],
    later: false,
  },
  { name: 'DSTC11, requests', items: dstc11Requests(), later: false },
]
for (const set of english) {
  const touched = set.items.filter((i) => clausesOf(i.text).some(isSocialFormula))
  const texts = touched.map((i) => i.text)
  const lostLater = await lostOf(texts, true)
  const lostFirst = set.later ? [] : await lostOf(texts, false)
  for (const text of [...lostLater, ...lostFirst]) lists.push(`- lost, ${set.name}: ${JSON.stringify(text)}`)
  console.log(
    `| ${set.name} | ${set.items.length} | ${touched.length} | ${lostLater.length} second${set.later ? '' : `, ${lostFirst.length} first`} |`,
  )
  for (const item of touched)
    lists.push(`- formula clause, ${set.name}: ${JSON.stringify(item.text.slice(0, 120))} (${item.where})`)
}
async function lostOf(texts: string[], later: boolean): Promise<string[]> {
  const before = await makesTopic(model, anchors, texts, rules(NONE), later)
  const after = await makesTopic(model, anchors, texts, rules(isSocialFormula), later)
  return texts.filter((_, i) => before[i] && !after[i])
}
console.log(`\n${lists.join('\n')}`)
