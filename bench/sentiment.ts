/**
 * Does a support complaint read negative, and does the score still read the public sets? Three scorers
 * side by side (bench/sentiment/measure.ts): VADER alone, VADER+support (the lexical scorer, the
 * fallback) and the learned heads on the MiniLM embedding (the default analyzer), on the support
 * messages, VADER's four corpora, the UCI sentences, GoEmotions' test split and DSTC11's real requests
 * (bench/data/README.md and services/analysis/train/README.md say where each comes from):
 *
 *   npm run bench:sentiment [-- --errors dev]
 *
 * Per set: precision and recall per class, macro-F1, Pearson's r on VADER's corpora. `npm run
 * bench:quality` runs the same measures and writes them to bench/QUALITY.md. `--errors dev` lists the
 * support dev half's errors (never ask for the test half's: it must stay unseen by tuning). The first run
 * embeds every text (a few minutes; cached under .cache/sentiment/).
 */
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import { labelFor } from '../services/analysis/src/analyzer.ts'
import { loadLearnedSentiment } from '../services/analysis/src/providers/learned-sentiment.ts'
import { createSentimentScorer, SENTIMENT_VERSION } from '../services/analysis/src/providers/sentiment.ts'
import { supportMessages } from '../services/analysis/train/corpora.ts'
import { embedCorpus } from '../services/analysis/train/embeddings.ts'
import { measureSentiment, sentimentMarkdown, sentimentSets } from './sentiment/measure.ts'
import { machineInfo, machineLine } from './support/machine.ts'

const { values } = parseArgs({ options: { errors: { type: 'string' } } })
if (values.errors !== undefined && values.errors !== 'dev') {
  throw new Error('--errors takes only "dev": the test half is measured, never read for tuning')
}

console.log(machineLine(await machineInfo()))
console.log(`lexical scorer: ${SENTIMENT_VERSION}`)

// The port of VADER's rules must stay VADER: checked against the vader-sentiment package on every text.
const require = createRequire(import.meta.url)
const vaderPackage = (
  require('vader-sentiment') as {
    SentimentIntensityAnalyzer: { polarity_scores(text: string): { compound: number } }
  }
).SentimentIntensityAnalyzer
const vaderOnly = createSentimentScorer({ rules: 'vader' })
const texts = sentimentSets()
  .flatMap((s) => s.items.map((e) => e.text))
  .filter((t) => !/\p{Extended_Pictographic}/u.test(t))
  .slice(0, 20_000)
const agreeing = texts.filter((t) => vaderPackage.polarity_scores(t).compound === vaderOnly.score(t))
console.log(
  `VADER alone agrees with the vader-sentiment package on ${agreeing.length} of ${texts.length} texts without emoji\n`,
)

const measures = await measureSentiment()
console.log(sentimentMarkdown(measures).join('\n'))

if (values.errors === 'dev') {
  const dev = supportMessages('dev')
  const embeddings = await embedCorpus(
    'support-dev',
    dev.map((e) => e.text),
  )
  const learned = loadLearnedSentiment()
  const lexical = createSentimentScorer()
  console.log('\nsupport dev: messages the learned scorer labels wrong (label → scored, score, lexical)')
  dev.forEach(({ text, label }, i) => {
    const lex = lexical.score(text)
    const { score } = learned.analyze(embeddings[i]!, lex).sentiment
    if (labelFor(score) !== label) {
      console.log(`  ${label} → ${labelFor(score)} ${score.toFixed(3)} (${lex.toFixed(3)})  ${text}`)
    }
  })
}
