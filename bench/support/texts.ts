/**
 * The texts the topic gate's benches read (bench:requests, bench:own-plans, bench:give-up-anchors,
 * bench:follow-up-anchors), each with where it comes from: CLINC150's and DSTC11's requests, GoEmotions'
 * thanks (../shared/data, read its README) and the signal sets' later end-user messages. The signal sets are
 * the caller's choice, never a blind one (openSignalsSets in bench/quality/signals.ts leaves them out).
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { openSignalsSets } from '../quality/signals.ts'
import { OLDER_HALF } from '../quality/signals-replay.ts'

const DATA = path.join(path.resolve(import.meta.dirname, '../..'), '../shared/data')

export interface Text {
  readonly text: string
  /** Its set and, where known, its conversation or intent, for a listing. */
  readonly where: string
}

export interface SignalsSetFile {
  readonly name: string
  readonly file: string
}

/** CLINC150's small talk: not requests. */
export const SOCIAL_INTENTS: ReadonlySet<string> = new Set([
  'greeting',
  'goodbye',
  'thank_you',
  'yes',
  'no',
  'maybe',
])

/** A CLINC150 split's queries with their intents, then (unless left out) its out-of-scope ones (`oos`). */
export function clinc150(
  split: 'val' | 'test',
  { outOfScope = true }: { outOfScope?: boolean } = {},
): { text: string; intent: string }[] {
  const data = JSON.parse(readFileSync(path.join(DATA, 'clinc150/data_full.json'), 'utf8')) as Record<
    string,
    [string, string][]
  >
  return [...data[split]!, ...(outOfScope ? data[`oos_${split}`]! : [])].map(([text, intent]) => ({
    text,
    intent,
  }))
}

/** A CLINC150 split's requests: every query, out-of-scope ones too, but its small talk. */
export function clincRequests(split: 'val' | 'test'): Text[] {
  return clinc150(split)
    .filter(({ intent }) => !SOCIAL_INTENTS.has(intent))
    .map(({ text, intent }) => ({ text, where: `CLINC150 ${split} ${intent}` }))
}

/** DSTC11's development utterances: spoken requests to an insurer, every one a request. */
export function dstc11Requests(): Text[] {
  return readFileSync(path.join(DATA, 'dstc11/development.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => ({ text: (JSON.parse(l) as { utterance: string }).utterance, where: 'DSTC11' }))
}

/**
 * GoEmotions' comments (dev, then test) labelled gratitude alone, with a question mark or without, of at
 * most `maxWords` words.
 */
export function gratitudeComments(withQuestion: boolean, maxWords = Number.POSITIVE_INFINITY): Text[] {
  const labels = readFileSync(path.join(DATA, 'goemotions/original/labels.txt'), 'utf8').split('\n')
  const only = String(labels.indexOf('gratitude'))
  return ['dev', 'test'].flatMap((split) =>
    readFileSync(path.join(DATA, `goemotions/original/${split}.tsv`), 'utf8')
      .split('\n')
      .map((line) => line.split('\t'))
      .filter((cols) => cols[1] === only && cols[0]!.includes('?') === withQuestion)
      .filter((cols) => cols[0]!.split(/\s+/).filter(Boolean).length <= maxWords)
      .map((cols) => ({ text: cols[0]!, where: `GoEmotions ${split}` })),
  )
}

/**
 * The end user's messages after each conversation's first, of the given signal sets, each with its set,
 * conversation and labels (`fresh7/c12 [escalation]`).
 */
export function laterUserMessages(sets: readonly SignalsSetFile[]): Text[] {
  return sets.flatMap(({ name, file }) =>
    (
      JSON.parse(readFileSync(file, 'utf8')) as {
        id: string
        signals: string[]
        messages: [string, string][]
      }[]
    ).flatMap((c) =>
      c.messages
        .filter(([who]) => who === 'user')
        .slice(1)
        .map(([, text]) => ({ text, where: `${name}/${c.id} [${c.signals.join(', ')}]` })),
    ),
  )
}

/**
 * The signal sets a bench may read (openSignalsSets: never a blind one), in their two halves: the older
 * (development … fresh6, signals-replay's OLDER_HALF) to choose on, the newer (fresh7 on) to confirm on.
 */
export function signalsSetHalves(): { older: SignalsSetFile[]; newer: SignalsSetFile[] } {
  const sets = openSignalsSets()
  return {
    older: sets.filter((s) => OLDER_HALF.has(s.name)),
    newer: sets.filter((s) => !OLDER_HALF.has(s.name)),
  }
}
