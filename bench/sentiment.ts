/**
 * Does a support complaint read negative? The sentiment scorer (services/analysis/src/providers/sentiment.ts)
 * against VADER alone, on labelled data (bench/data/README.md says where it comes from):
 *
 *   npm run bench:sentiment [-- --errors dev]
 *
 * - support messages, dev and test halves, 3 classes: precision, recall and F1 of the negative class,
 *   accuracy, and the confusion matrix (rows: the label, columns: what the scorer said);
 * - UCI Sentiment Labelled Sentences (Amazon, Yelp, IMDb reviews), 2 classes: the negative class against
 *   everything else (a review the scorer calls neutral is "not negative").
 * A score is negative at −0.05 or below, positive at 0.05 or above, as the analyzer labels it (labelFor).
 * "VADER alone" is today's scorer: the port in vader.ts with VADER's own rules, checked here against the
 * vader-sentiment package on every text. Then messages/s on one core, for the package and both rule sets.
 * `--errors dev` lists the dev half's errors (never ask for the test half's: it must stay unseen by tuning).
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import { labelFor, type SentimentLabel } from '../services/analysis/src/analyzer.ts'
import { createSentimentScorer, SENTIMENT_VERSION } from '../services/analysis/src/providers/sentiment.ts'
import { machineInfo, machineLine } from './support/machine.ts'

const { values } = parseArgs({ options: { errors: { type: 'string' } } })
if (values.errors !== undefined && values.errors !== 'dev') {
  throw new Error('--errors takes only "dev": the test half is measured, never read for tuning')
}

interface Example {
  readonly text: string
  readonly label: SentimentLabel
}
interface DataSet {
  readonly name: string
  readonly examples: readonly Example[]
  readonly classes: 2 | 3
}

const data = (path: string) => readFileSync(new URL(`data/${path}`, import.meta.url), 'utf8')

function supportSet(half: 'dev' | 'test'): DataSet {
  const [, ...lines] = data(`support-sentiment/${half}.tsv`).trimEnd().split('\n')
  const examples = lines.map((line) => {
    const [label, , text] = line.split('\t')
    return { label: label as SentimentLabel, text: text! }
  })
  return { name: `support ${half}`, examples, classes: 3 }
}

function uciSet(source: 'amazon' | 'yelp' | 'imdb'): DataSet {
  const rows = JSON.parse(data(`uci-sentiment/${source}.json`)) as { text: string; class: 0 | 1 | null }[]
  // Each file ends with an empty, unlabelled entry.
  const examples = rows
    .filter((row) => row.class !== null)
    .map((row) => ({
      text: row.text,
      label: row.class === 0 ? ('negative' as const) : ('positive' as const),
    }))
  return { name: `UCI ${source}`, examples, classes: 2 }
}

const LABELS: readonly SentimentLabel[] = ['negative', 'neutral', 'positive']

interface Result {
  readonly precision: number
  readonly recall: number
  readonly f1: number
  readonly accuracy: number
  /** confusion[label][predicted] */
  readonly confusion: Record<SentimentLabel, Record<SentimentLabel, number>>
}

function evaluate(set: DataSet, score: (text: string) => number): Result {
  const confusion = Object.fromEntries(
    LABELS.map((l) => [l, Object.fromEntries(LABELS.map((p) => [p, 0]))]),
  ) as Result['confusion']
  let correct = 0
  for (const { text, label } of set.examples) {
    const predicted = labelFor(score(text))
    confusion[label][predicted]++
    const right =
      set.classes === 3 ? predicted === label : (predicted === 'negative') === (label === 'negative')
    if (right) correct++
  }
  const truePositives = confusion.negative.negative
  const predictedNegative = LABELS.reduce((sum, l) => sum + confusion[l].negative, 0)
  const actualNegative = LABELS.reduce((sum, p) => sum + confusion.negative[p], 0)
  const precision = predictedNegative === 0 ? 0 : truePositives / predictedNegative
  const recall = actualNegative === 0 ? 0 : truePositives / actualNegative
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)
  return { precision, recall, f1, accuracy: correct / set.examples.length, confusion }
}

const sets = [supportSet('dev'), supportSet('test'), uciSet('amazon'), uciSet('yelp'), uciSet('imdb')]
const texts = sets.flatMap((set) => set.examples.map((e) => e.text))

console.log(machineLine(await machineInfo()))
const start = performance.now()
const vaderOnly = createSentimentScorer({ rules: 'vader' })
const support = createSentimentScorer()
console.log(
  `scorer: ${SENTIMENT_VERSION} (two scorers loaded in ${(performance.now() - start).toFixed(0)} ms)`,
)

const require = createRequire(import.meta.url)
const vaderPackage = (
  require('vader-sentiment') as {
    SentimentIntensityAnalyzer: { polarity_scores(text: string): { compound: number } }
  }
).SentimentIntensityAnalyzer
// The package has no emoji lexicon; both scorers add winkNLP's emoji scores, as the analyzer did before.
const withoutEmoji = texts.filter((t) => !/\p{Extended_Pictographic}/u.test(t))
const agreeing = withoutEmoji.filter((t) => vaderPackage.polarity_scores(t).compound === vaderOnly.score(t))
console.log(
  `VADER alone agrees with the vader-sentiment package on ${agreeing.length} of the ${withoutEmoji.length} ` +
    `texts without emoji\n`,
)

const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7)
console.log(
  `${'set'.padEnd(14)}${'n'.padStart(6)}  ${'scorer'.padEnd(13)}` +
    `${'precision'.padStart(10)}${'recall'.padStart(8)}${'F1'.padStart(8)}${'accuracy'.padStart(10)}  (negative class)`,
)
const results = new Map<string, { vader: Result; support: Result }>()
for (const set of sets) {
  const both = { vader: evaluate(set, vaderOnly.score), support: evaluate(set, support.score) }
  results.set(set.name, both)
  for (const [name, r] of [
    ['VADER alone', both.vader],
    ['VADER+support', both.support],
  ] as const) {
    console.log(
      `${set.name.padEnd(14)}${String(set.examples.length).padStart(6)}  ${name.padEnd(13)}` +
        `${pct(r.precision).padStart(10)}${pct(r.recall)}${pct(r.f1).padStart(8)}${pct(r.accuracy).padStart(10)}`,
    )
  }
}

for (const set of sets.filter((s) => s.classes === 3)) {
  const both = results.get(set.name)!
  console.log(`\n${set.name}: confusion (rows: label; columns: scored negative / neutral / positive)`)
  for (const [name, r] of [
    ['VADER alone', both.vader],
    ['VADER+support', both.support],
  ] as const) {
    for (const label of LABELS) {
      const row = LABELS.map((p) => String(r.confusion[label][p]).padStart(5)).join('')
      console.log(`  ${(label === 'negative' ? name : '').padEnd(15)}${label.padEnd(10)}${row}`)
    }
  }
}

/** Messages scored per second on one core: every text once as warm-up, then passes for at least a second. */
function throughput(score: (text: string) => unknown): number {
  for (const text of texts) score(text)
  let scored = 0
  const begin = performance.now()
  while (performance.now() - begin < 1_000) {
    for (const text of texts) score(text)
    scored += texts.length
  }
  return scored / ((performance.now() - begin) / 1000)
}
const rate = (x: number) => `${Math.round(x).toLocaleString('en')} messages/s`.padStart(20)
console.log(`\nthroughput, one core (${texts.length.toLocaleString('en')} texts, avg ${avgChars()} chars)`)
console.log(
  `  vader-sentiment package (the analyzer before)  ${rate(throughput(vaderPackage.polarity_scores))}`,
)
console.log(`  VADER alone (vader.ts)                         ${rate(throughput(vaderOnly.score))}`)
console.log(`  VADER+support (sentiment.ts)                   ${rate(throughput(support.score))}`)

if (values.errors === 'dev') {
  console.log('\nsupport dev: messages the new scorer labels wrong (label → scored, score)')
  for (const { text, label } of sets[0]!.examples) {
    const score = support.score(text)
    if (labelFor(score) !== label) console.log(`  ${label} → ${labelFor(score)} ${score.toFixed(3)}  ${text}`)
  }
}

function avgChars(): number {
  return Math.round(texts.reduce((sum, t) => sum + t.length, 0) / texts.length)
}
