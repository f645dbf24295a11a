/**
 * The development sets topic discovery is measured on (../shared/data/README.md), and the conversations
 * they are captured as. CLINC150's test split spans ten unrelated domains; DSTC11 track 2's development
 * set is one domain (an insurer), where intents lie close together. Constants are chosen on one and
 * confirmed on the other (CONVENTIONS.md rule 13).
 */
import { readFileSync } from 'node:fs'
import { seededRandom } from '../support/random.ts'

export const SET_NAMES = ['clinc150', 'dstc11'] as const
export type SetName = (typeof SET_NAMES)[number]

export interface LabelledRequest {
  readonly text: string
  readonly intent: string
}

export interface DevelopmentSet {
  readonly name: SetName
  readonly description: string
  /** In a shuffled order of arrival (the run's seed), not grouped by intent. */
  readonly requests: readonly LabelledRequest[]
}

export function loadSet(
  name: SetName,
  dataDir: string,
  opts: { seed: number; limit?: number },
): DevelopmentSet {
  const all =
    name === 'clinc150'
      ? (
          JSON.parse(readFileSync(`${dataDir}/clinc150/data_full.json`, 'utf8')) as {
            test: [string, string][]
          }
        ).test.map(([text, intent]) => ({ text, intent }))
      : readFileSync(`${dataDir}/dstc11/development.jsonl`, 'utf8')
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => {
            const { utterance, intent } = JSON.parse(line) as { utterance: string; intent: string }
            return { text: utterance, intent }
          })
  const requests = shuffled(all, seededRandom(opts.seed)).slice(0, opts.limit ?? all.length)
  return {
    name,
    description:
      name === 'clinc150'
        ? 'CLINC150 test split (10 unrelated domains)'
        : 'DSTC11 track 2 development set (one domain: insurance, spoken style)',
    requests,
  }
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  return items
    .map((item) => ({ item, r: random() }))
    .sort((a, b) => a.r - b.r)
    .map(({ item }) => item)
}

export interface CapturedMessage {
  readonly id: string
  readonly role: 'user' | 'assistant'
  readonly content: string
}

/** What end users open with before saying what they want: never a topic. */
export const GREETINGS = ['hi', 'hello there', 'hey', 'good morning', 'hi there']
export const BOT_GREETING = 'Hello! How can I help you today?'
/** What bots say to everyone, whatever was asked: none of it may ever become a topic. */
export const BOILERPLATE = [
  'I am sorry to hear that. Let me help you with that right away.',
  'Thanks for reaching out! Our account team will get back to you shortly.',
  'I understand. Let me check that for you, one moment please.',
]

/**
 * A realistic conversation around one request: a share of them (seeded) open with a greeting the bot
 * answers, and the request comes in the end user's second message; every request gets a boilerplate reply.
 */
export function conversationOf(
  request: string,
  index: number,
  opts: { greetingShare: number; random: () => number },
): CapturedMessage[] {
  const reply: CapturedMessage = {
    id: 'a',
    role: 'assistant',
    content: BOILERPLATE[index % BOILERPLATE.length]!,
  }
  const ask: CapturedMessage = { id: 'q', role: 'user', content: request }
  if (opts.random() >= opts.greetingShare) return [ask, reply]
  const greeting = GREETINGS[Math.floor(opts.random() * GREETINGS.length)]!
  return [
    { id: 'g', role: 'user', content: greeting },
    { id: 'ga', role: 'assistant', content: BOT_GREETING },
    ask,
    reply,
  ]
}
