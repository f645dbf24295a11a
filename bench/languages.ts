/**
 * The language detector (services/analysis/src/language.ts) on end users' messages whose language is
 * known: trial6's Spanish and messy-English chatbots (bench/data/trials/trial6-es-en.json, hand-written),
 * CLINC150's test queries and DSTC11's development requests (English, ../shared/data). Per set: the share
 * named right, `und`, the other languages named most; and right by length band, which chose the minimum
 * length (on trial6) and confirms it (on CLINC150 and DSTC11). Beside it, the same detector without the
 * minimum. bench/FINDINGS.md, "the product says when a chatbot's users do not write English".
 *
 *   npx tsx bench/languages.ts
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { UNDETERMINED_LANGUAGE } from '@cas/events'
import { detect } from 'tinyld'
import { detectLanguage, LANGUAGE_MIN_LENGTH } from '../services/analysis/src/language.ts'

const DATA = path.resolve(import.meta.dirname, '../../shared/data')

interface LabelledSet {
  readonly name: string
  readonly language: string
  readonly texts: readonly string[]
}

const trial6 = JSON.parse(
  readFileSync(path.join(import.meta.dirname, 'data/trials/trial6-es-en.json'), 'utf8'),
) as {
  chatbots: {
    key: string
    language: string
    conversations: { turns: { role: string; content: string }[] }[]
  }[]
}
const sets: LabelledSet[] = [
  ...trial6.chatbots.map((bot) => ({
    name: `trial6 ${bot.key}`,
    language: bot.language,
    texts: bot.conversations.flatMap((c) => c.turns.filter((t) => t.role === 'user').map((t) => t.content)),
  })),
  {
    name: 'clinc150 test',
    language: 'en',
    texts: (
      JSON.parse(readFileSync(path.join(DATA, 'clinc150/data_full.json'), 'utf8')) as {
        test: [string, string][]
      }
    ).test.map(([text]) => text),
  },
  {
    name: 'dstc11 development',
    language: 'en',
    texts: readFileSync(path.join(DATA, 'dstc11/development.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { utterance: string }).utterance),
  },
]

const percent = (n: number, of: number) => (of === 0 ? '-' : `${((100 * n) / of).toFixed(1)} %`)
const BANDS: readonly [number, number][] = [
  [0, 15],
  [15, LANGUAGE_MIN_LENGTH],
  [LANGUAGE_MIN_LENGTH, Number.POSITIVE_INFINITY],
]

console.log(`minimum length ${LANGUAGE_MIN_LENGTH} characters`)
for (const set of sets) {
  const named = new Map<string, number>()
  for (const text of set.texts) {
    const language = detectLanguage(text)
    named.set(language, (named.get(language) ?? 0) + 1)
  }
  const n = set.texts.length
  const right = named.get(set.language) ?? 0
  const others = [...named]
    .filter(([language]) => language !== set.language && language !== UNDETERMINED_LANGUAGE)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([language, count]) => `${language} ${count}`)
    .join(', ')
  const bare = set.texts.filter((text) => detect(text) === set.language).length
  console.log(
    `${set.name}: ${n} messages, ${set.language} ${right} (${percent(right, n)}), ${UNDETERMINED_LANGUAGE} ${named.get(UNDETERMINED_LANGUAGE) ?? 0}, others ${others}; without the minimum ${set.language} ${bare} (${percent(bare, n)})`,
  )
  const bands = BANDS.map(([from, to]) => {
    const texts = set.texts.filter((t) => [...t.trim()].length >= from && [...t.trim()].length < to)
    const ok = texts.filter((t) => detect(t.trim()) === set.language).length
    return `[${from}, ${to}) ${ok} of ${texts.length} (${percent(ok, texts.length)})`
  })
  console.log(`  by length, without the minimum: ${bands.join(' | ')}`)
}
