import { UNDETERMINED_LANGUAGE } from '@cas/events'
import { describe, expect, it } from 'vitest'
import { analyzed, captured, recorded } from '../../test/fold-test-support.ts'
import {
  firstSeenCaptured,
  foldMessage,
  MessageChanges,
  type MessageSteps,
  messageRow,
  resultsOnly,
  type StoredMessage,
} from './message-fold.ts'
import { arrayLiteral } from './messages.ts'
import { RollupDeltas } from './rollup-deltas.ts'

const H = '2026-11-20T12:00:00.000Z'
const SENT = '2026-11-20T12:10:00.000Z'

type Event =
  | ReturnType<typeof recorded<'conversation.messages-captured'>>
  | ReturnType<typeof recorded<'analysis.messages-analyzed'>>

/** Given a batch's captures and results (and the message's stored row), when folded: row and rollups. */
function given(events: Event[], stored: StoredMessage | null = null) {
  const batch = new MessageChanges()
  for (const e of events) {
    if (e.type === 'conversation.messages-captured') batch.addCaptured(e)
    else batch.addAnalyzed(e)
  }
  const [entry, ...more] = batch.take() as [MessageSteps, ...MessageSteps[]]
  expect(more).toEqual([])
  const rollups = new RollupDeltas()
  foldMessage(entry, stored, rollups)
  const writes = rollups.takeWrites()
  return {
    entry,
    row: messageRow(entry),
    stats: writes.stats,
    topics: writes.hourlyTopics.map((t) => [t.topic, t.n, t.sentimentSum]),
    languages: writes.hourlyLanguages.map((l) => [l.hour.slice(11, 13), l.language, l.n]),
  }
}

const capture = (sentAt = SENT, role: 'user' | 'assistant' = 'user') =>
  recorded('conversation.messages-captured', captured(['m1', role, sentAt]))
const result = (score: number, label: 'positive' | 'neutral' | 'negative', topics: string[] = []) =>
  recorded('analysis.messages-analyzed', analyzed(['m1', score, label, topics]))

/** A result of m1 saying `language` (undefined: says none, as a move to another topic or a v3 result). */
const spoken = (language: string | undefined) => {
  const e = result(0.1, 'neutral', ['t'])
  const [r] = e.payload.results
  return { ...e, payload: { ...e.payload, results: [{ ...r!, language }] } }
}
const storedUser = (language: string | null, sentAt: string | null = SENT): StoredMessage => ({
  role: sentAt === null ? null : 'user',
  sent_at: sentAt === null ? null : new Date(sentAt),
  sentiment_score: 0.1,
  sentiment_label: 'neutral',
  topics: ['t'],
  language,
})

describe('the message fold', () => {
  it('writes a new message captured and analysed in one batch, counting its result once', () => {
    const then = given([capture(), result(0.5, 'positive', ['refunds'])])
    expect(firstSeenCaptured(then.entry)).toBe(true)
    expect(then.row).toMatchObject({
      messageId: 'm1',
      role: 'user',
      content: 'text of m1',
      sentAt: SENT,
      sentimentScore: 0.5,
      sentimentLabel: 'positive',
      topics: ['refunds'],
      analyzer: 'test@1',
    })
    expect(then.stats).toMatchObject([
      { hour: H, sentimentSum: 0.5, sentimentCount: 1, positive: 1, messages: 0 },
    ])
    expect(then.topics).toEqual([['refunds', 1, 0.5]])
  })

  it('keeps the language of the last result that said one: a result that only moved the message says none', () => {
    expect(given([capture(), spoken('es'), spoken(undefined)]).row.language).toBe('es')
    expect(given([capture(), spoken('es'), spoken('en')]).row.language).toBe('en')
    expect(given([spoken(undefined)]).row.language).toBeUndefined()
  })

  it('keeps the analyzer that read the message when a result only moves it to another topic', () => {
    // A re-clustering's move names the analyzer running then, which read nothing (signalsDecided false):
    // after an upgrade, the messages it moved counted as read by the new analyzer.
    const moved = (name: string) => {
      const e = result(0.1, 'neutral', ['t2'])
      return {
        ...e,
        payload: { ...e.payload, analyzer: { name, version: '2' }, signalsDecided: false as const },
      }
    }
    const then = given([capture(), result(0.1, 'neutral', ['t']), moved('newer')])
    expect(then.row).toMatchObject({ topics: ['t2'], analyzer: 'test@1' })
    // Alone in its batch: none (the stored one stands); a result that was decided does name its own.
    expect(given([moved('newer')]).row.analyzer).toBeUndefined()
    const decided = { ...moved('newer'), payload: { ...moved('newer').payload, signalsDecided: true } }
    expect(given([decided]).row.analyzer).toBe('newer@2')
  })

  it('replaces a stored result: the old one leaves its hour, only the last of the batch counts', () => {
    const stored: StoredMessage = {
      role: 'user',
      sent_at: new Date(SENT),
      sentiment_score: -0.5,
      sentiment_label: 'negative',
      topics: ['shipping'],
      language: null,
    }
    const then = given([result(0.1, 'neutral', ['refunds']), result(0.5, 'positive', ['refunds'])], stored)
    expect(resultsOnly(then.entry)).toBe(true)
    expect(then.row).toMatchObject({ sentimentScore: 0.5, sentimentLabel: 'positive', topics: ['refunds'] })
    expect(then.row.content).toBeUndefined()
    expect(then.stats).toMatchObject([
      { hour: H, sentimentSum: 1, sentimentCount: 0, negative: -1, neutral: 0, positive: 1 },
    ])
    expect(then.topics).toEqual([
      ['refunds', 1, 0.5],
      ['shipping', -1, 0.5],
    ])
  })

  it("counts a result that arrived before its message in the capture's hour and role", () => {
    // Given a row holding only the result (analysis ran ahead on another topic)
    const stored: StoredMessage = {
      role: null,
      sent_at: null,
      sentiment_score: -0.5,
      sentiment_label: 'negative',
      topics: [],
      language: null,
    }
    // When the message is captured
    const then = given([capture('2026-11-20T15:59:59.999Z', 'assistant')], stored)
    // Then the result counts as the assistant's, in the capture's hour
    expect(then.stats).toMatchObject([
      {
        hour: '2026-11-20T15:00:00.000Z',
        assistantSentimentSum: -0.5,
        assistantNegative: 1,
        sentimentCount: 0,
      },
    ])
    expect(then.row).toMatchObject({ role: 'assistant', sentAt: '2026-11-20T15:59:59.999Z' })
    expect(then.row.analyzer).toBeUndefined()
  })

  it('keeps a result for a message not captured yet out of the rollups', () => {
    const then = given([result(0.5, 'positive', ['refunds'])])
    expect(firstSeenCaptured(then.entry)).toBe(false)
    expect(then.stats).toEqual([])
    expect(then.row).toMatchObject({ sentimentScore: 0.5, topics: ['refunds'] })
    expect(then.row.role).toBeUndefined()
  })

  it('takes the last capture of a message captured twice, with its arrival order', () => {
    const first = capture('2026-11-20T12:10:00.000Z')
    const second = capture('2026-11-20T12:20:00.000Z')
    const then = given([first, second])
    expect(then.row.sentAt).toBe('2026-11-20T12:20:00.000Z')
    expect(then.row.arrival).toBe((BigInt(second.position) * 1000n + 1n).toString())
    expect(then.stats).toEqual([])
  })

  it("orders a capture's messages after its position, the thousandth and later ones too", () => {
    const many = recorded(
      'conversation.messages-captured',
      captured(
        ...Array.from({ length: 1_001 }, (_, i) => [`m${i}`, 'user', SENT] as [string, 'user', string]),
      ),
    )
    const batch = new MessageChanges()
    batch.addCaptured(many)
    const arrivals = batch.take().map((entry) => BigInt(messageRow(entry).arrival!))
    const position = BigInt(many.position) * 1000n
    expect(arrivals).toEqual(Array.from({ length: 1_001 }, (_, i) => position + BigInt(i + 1)))
  })
})

describe("the message fold's languages (rm_hourly_languages)", () => {
  it("counts an end user's message once it has both its capture and a detected language", () => {
    expect(given([capture(), spoken('es')]).languages).toEqual([['12', 'es', 1]])
    // A result without a language, 'und', or an assistant's message: nothing.
    expect(given([capture(), spoken(undefined)]).languages).toEqual([])
    expect(given([capture(), spoken(UNDETERMINED_LANGUAGE)]).languages).toEqual([])
    expect(given([capture(SENT, 'assistant'), spoken('es')]).languages).toEqual([])
    // The result first (a row without role or time): counted when the capture comes, in its hour.
    expect(given([spoken('es')]).languages).toEqual([])
    expect(given([capture('2026-11-20T15:59:59.999Z')], storedUser('es', null)).languages).toEqual([
      ['15', 'es', 1],
    ])
  })

  it('moves the count when a re-analysis detects another language, and keeps it when a result says none', () => {
    expect(given([spoken('en')], storedUser('es')).languages).toEqual([
      ['12', 'en', 1],
      ['12', 'es', -1],
    ])
    expect(given([spoken(UNDETERMINED_LANGUAGE)], storedUser('es')).languages).toEqual([['12', 'es', -1]])
    expect(given([spoken(undefined)], storedUser('es')).languages).toEqual([])
    expect(
      given([spoken('es'), spoken('en'), spoken(undefined)], storedUser(UNDETERMINED_LANGUAGE)).languages,
    ).toEqual([['12', 'en', 1]])
  })

  it('changes nothing for an event applied again (redelivered): the stored row already has it', () => {
    expect(given([spoken('es')], storedUser('es')).languages).toEqual([])
    expect(given([capture()], storedUser('es')).languages).toEqual([])
  })

  it('moves the count to the hour of a message captured again at another time', () => {
    expect(given([capture('2026-11-20T13:30:00.000Z')], storedUser('es')).languages).toEqual([
      ['12', 'es', -1],
      ['13', 'es', 1],
    ])
  })
})

describe('arrayLiteral', () => {
  it('quotes and escapes every element', () => {
    expect(arrayLiteral([])).toBe('{}')
    expect(arrayLiteral(['a', 'b c', 'say "hi"', 'back\\slash', 'NULL', '{x,y}'])).toBe(
      '{"a","b c","say \\"hi\\"","back\\\\slash","NULL","{x,y}"}',
    )
  })
})
