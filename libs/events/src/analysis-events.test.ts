import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { expectAccepted, expectRejectedAt, rawEvent, rawEventWithPayload } from '../test/support.ts'
import {
  analysisConversationAnalyzedV1,
  analysisConversationAnalyzedV2,
  analysisConversationAnalyzedV3,
  analysisEventDefinitions,
  analysisEventSchema,
  analysisFailedV1,
  analysisMessagesAnalyzedV1,
  analysisMessagesAnalyzedV2,
  analysisMessagesAnalyzedV3,
  analysisMessagesAnalyzedV4,
  analysisThemesAssignedV1,
  analysisTopicDiscoveredV1,
  analysisTopicMergedV1,
  UNDETERMINED_LANGUAGE,
} from './analysis-events.ts'
import { readerEventDefinitions } from './domain-event.ts'
import { upcast } from './upcasters.ts'

function messagesAnalyzedWith(result: Record<string, unknown>) {
  const base = { messageId: 'm-1', sentiment: { score: 0, label: 'neutral' }, topics: [] }
  return rawEventWithPayload(analysisMessagesAnalyzedV1, { results: [{ ...base, ...result }] })
}

function conversationAnalyzedWith(payload: Record<string, unknown>) {
  return rawEventWithPayload(analysisConversationAnalyzedV1, payload)
}

describe('analysis events', () => {
  it.each(analysisEventDefinitions.map((definition) => [definition.type, definition] as const))(
    '%s accepts its example',
    (_, definition) => {
      expectAccepted(definition.schema, rawEvent(definition))
    },
  )

  it('analysis.themes-assigned takes no themes (topics that make none) but no theme without a topic', () => {
    expectAccepted(
      analysisThemesAssignedV1.schema,
      rawEventWithPayload(analysisThemesAssignedV1, { themes: [] }),
    )
    expectRejectedAt(
      analysisThemesAssignedV1.schema,
      rawEventWithPayload(analysisThemesAssignedV1, {
        themes: [{ themeId: '4f3e1a0b-7c2d-4e5f-8a9b-0c1d2e3f4a5b', label: 'Card', topicIds: [] }],
      }),
      'payload.themes.0.topicIds',
    )
  })

  it.each(
    readerEventDefinitions
      .filter((definition) => definition.streamType === 'analysis')
      .map((definition) => [`${definition.type} v${definition.version}`, definition] as const),
  )("the readers' union accepts %s", (_, definition) => {
    expectAccepted(analysisEventSchema, rawEvent(definition))
  })

  describe('version 2 of the results: topics by id', () => {
    it("reads a v1 result's key phrases as topics whose id is their label, and no assistant sentiment", () => {
      const v1 = rawEvent(analysisMessagesAnalyzedV1)
      expect(upcast(v1)).toMatchObject({
        version: 4,
        payload: { results: [{ messageId: 'm-1', topics: [{ id: 'pricing', label: 'pricing' }] }] },
      })
      const conversation = upcast(rawEvent(analysisConversationAnalyzedV1)) as { payload: unknown }
      expect(conversation.payload).toMatchObject({
        assistantSentiment: null,
        topics: [
          { id: 'pricing', label: 'pricing' },
          { id: 'plans', label: 'plans' },
        ],
      })
    })

    it('refuses a topic without an id', () => {
      const result = { messageId: 'm-1', sentiment: { score: 0, label: 'neutral' }, topics: [{ label: 'x' }] }
      expectRejectedAt(
        analysisMessagesAnalyzedV2.schema,
        rawEventWithPayload(analysisMessagesAnalyzedV2, { results: [result] }),
        'payload.results.0.topics.0.id',
      )
    })
  })

  describe("version 3 of a conversation's result: no end-user sentiment without an end-user message", () => {
    it('reads a v2 result as it was recorded, and v2 refuses what v3 allows', () => {
      const v2 = rawEvent(analysisConversationAnalyzedV2)
      expect(upcast(v2)).toEqual({ ...v2, version: 3 })
      const noEndUser = rawEventWithPayload(analysisConversationAnalyzedV3, { sentiment: null })
      expectAccepted(analysisConversationAnalyzedV3.schema, noEndUser)
      expectRejectedAt(
        analysisConversationAnalyzedV2.schema,
        { ...noEndUser, version: 2 },
        'payload.sentiment',
      )
    })
  })

  describe('version 3 of the results: whether the signals were decided with them', () => {
    it('reads a v1 or v2 result as not saying (null), its results unchanged', () => {
      const v2 = rawEvent(analysisMessagesAnalyzedV2)
      expect(upcast(v2)).toEqual({
        ...v2,
        version: 4,
        payload: { ...analysisMessagesAnalyzedV2.example, signalsDecided: null },
      })
      expect(upcast(rawEvent(analysisMessagesAnalyzedV1))).toMatchObject({
        version: 4,
        payload: { signalsDecided: null },
      })
    })

    it('requires v3 to say it: true, false or null', () => {
      expectRejectedAt(
        analysisMessagesAnalyzedV3.schema,
        rawEventWithPayload(analysisMessagesAnalyzedV3, { signalsDecided: undefined }),
        'payload.signalsDecided',
      )
      for (const signalsDecided of [true, false, null])
        expectAccepted(
          analysisMessagesAnalyzedV3.schema,
          rawEventWithPayload(analysisMessagesAnalyzedV3, { signalsDecided }),
        )
    })
  })

  describe("version 4 of the results: each end-user message's language", () => {
    it('reads a v3 result as saying no language, its results unchanged', () => {
      const v3 = rawEvent(analysisMessagesAnalyzedV3)
      const read = upcast(v3) as { payload: { results: { language?: string }[] } }
      expect(read).toEqual({ ...v3, version: 4, payload: analysisMessagesAnalyzedV3.example })
      expect(read.payload.results[0]!.language).toBeUndefined()
    })

    it("names an undetermined language as ISO 639 does, as migration 0061's SQL spells it", () => {
      // The migrations keep their own literal (an applied migration is never rewritten): the two must agree.
      const migration = readFileSync(
        new URL('../../../migrations/0061_hourly-languages.sql', import.meta.url),
        'utf8',
      )
      expect(migration).toContain(`language <> '${UNDETERMINED_LANGUAGE}'`)
      expect(UNDETERMINED_LANGUAGE).toMatch(/^[a-z]{3}$/)
    })

    it('takes an ISO 639 code or "und", or none; refuses anything else', () => {
      const withLanguage = (language: unknown) =>
        rawEventWithPayload(analysisMessagesAnalyzedV4, {
          results: [{ ...analysisMessagesAnalyzedV4.example.results[0]!, language }],
        })
      for (const language of ['en', 'es', UNDETERMINED_LANGUAGE, undefined])
        expectAccepted(analysisMessagesAnalyzedV4.schema, withLanguage(language))
      for (const language of ['', 'EN', 'english', null, 'e1'])
        expectRejectedAt(
          analysisMessagesAnalyzedV4.schema,
          withLanguage(language),
          'payload.results.0.language',
        )
    })
  })

  describe('topic events', () => {
    it('name topics by UUID', () => {
      expectRejectedAt(
        analysisTopicDiscoveredV1.schema,
        rawEventWithPayload(analysisTopicDiscoveredV1, { topicId: 'refunds' }),
        'payload.topicId',
      )
      expectRejectedAt(
        analysisTopicMergedV1.schema,
        rawEventWithPayload(analysisTopicMergedV1, { into: 'other' }),
        'payload.into',
      )
    })
  })

  describe('sentiment', () => {
    it.each([-1, -0.25, 0, 1])('accepts score %d', (score) => {
      expectAccepted(
        analysisMessagesAnalyzedV1.schema,
        messagesAnalyzedWith({ sentiment: { score, label: 'neutral' } }),
      )
      expectAccepted(
        analysisConversationAnalyzedV1.schema,
        conversationAnalyzedWith({ sentiment: { score, label: 'neutral' } }),
      )
    })

    it.each([-1.01, 1.5, Number.NaN, '0.5'])('rejects score %s', (score) => {
      expectRejectedAt(
        analysisMessagesAnalyzedV1.schema,
        messagesAnalyzedWith({ sentiment: { score, label: 'positive' } }),
        'payload.results.0.sentiment.score',
      )
      expectRejectedAt(
        analysisConversationAnalyzedV1.schema,
        conversationAnalyzedWith({ sentiment: { score, label: 'positive' } }),
        'payload.sentiment.score',
      )
    })

    it.each(['mixed', 'Positive', ''])('rejects label %j', (label) => {
      expectRejectedAt(
        analysisMessagesAnalyzedV1.schema,
        messagesAnalyzedWith({ sentiment: { score: 0, label } }),
        'payload.results.0.sentiment.label',
      )
    })
  })

  describe('analysis.messages-analyzed', () => {
    const schema = analysisMessagesAnalyzedV1.schema

    it('names the analyzer', () => {
      expectRejectedAt(
        schema,
        rawEventWithPayload(analysisMessagesAnalyzedV1, { analyzer: undefined }),
        'payload.analyzer',
      )
      expectRejectedAt(
        schema,
        rawEventWithPayload(analysisMessagesAnalyzedV1, { analyzer: { name: 'llm' } }),
        'payload.analyzer.version',
      )
    })

    it('holds at least one result, each for a message id, with topics as non-empty strings', () => {
      expectRejectedAt(
        schema,
        rawEventWithPayload(analysisMessagesAnalyzedV1, { results: [] }),
        'payload.results',
      )
      expectRejectedAt(schema, messagesAnalyzedWith({ messageId: '' }), 'payload.results.0.messageId')
      expectRejectedAt(schema, messagesAnalyzedWith({ topics: [''] }), 'payload.results.0.topics.0')
      expectRejectedAt(schema, messagesAnalyzedWith({ topics: 'pricing' }), 'payload.results.0.topics')
      expectRejectedAt(schema, messagesAnalyzedWith({ sentiment: undefined }), 'payload.results.0.sentiment')
    })
  })

  it('analysis.conversation-analyzed requires analyzer, sentiment and topics', () => {
    for (const field of ['analyzer', 'sentiment', 'topics']) {
      expectRejectedAt(
        analysisConversationAnalyzedV1.schema,
        conversationAnalyzedWith({ [field]: undefined }),
        `payload.${field}`,
      )
    }
  })

  describe('analysis.failed', () => {
    const schema = analysisFailedV1.schema
    const failedWith = (payload: Record<string, unknown>) => rawEventWithPayload(analysisFailedV1, payload)

    it('accepts a failure that covers no particular message', () => {
      expectAccepted(schema, failedWith({ messageIds: [] }))
    })

    it.each([
      ['attempt 0', { attempt: 0 }, 'payload.attempt'],
      ['a fractional attempt', { attempt: 1.5 }, 'payload.attempt'],
      ['an empty reason', { reason: '' }, 'payload.reason'],
      ['a missing retryable flag', { retryable: undefined }, 'payload.retryable'],
      ['a non-string message id', { messageIds: [1] }, 'payload.messageIds.0'],
    ])('rejects %s', (_, payload, path) => {
      expectRejectedAt(schema, failedWith(payload), path)
    })
  })
})
