/**
 * Message rows go to Postgres as one JSON document of column arrays, each row's topics an array
 * literal: topic ids with quotes, backslashes, commas and braces (key phrases are ids too) must come
 * back as they were, on the insert path (new messages) and the upsert path (results for stored ones).
 *
 * On the test run's server: on PostgreSQL 18 (the embedded one) the upserts return the stored rows
 * (RETURNING OLD); before 18 a statement locks and reads them first. DATABASE_URL may name any PostgreSQL
 * 14+ (docs/configuration.md): CI runs the suite a second time on one before 18 (TEST_POSTGRES_BINARIES,
 * .ci/run), and so this file on both.
 */
import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import type { JournalRecord } from '@cas/eventlog'
import type { EventPayload, EventType } from '@cas/events'
import { dataKeyFor } from '@cas/keyring'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { testKeyring } from '../../../../test/support/keyring.ts'
import { sealedRecord } from '../../test/sealed-record.ts'
import { applyToReadModels } from './apply.ts'

const returningOld = inject('postgresVersion') >= 180_000

describe(`message rows on PostgreSQL ${Math.floor(inject('postgresVersion') / 10_000)}`, () => {
  const orgId = randomUUID()
  const chatbotId = randomUUID()
  let key: Buffer
  let position = 1_000n

  let db: TestDatabase
  beforeAll(async () => {
    db = await createTestDatabase()
    key = await dataKeyFor(db.pool, testKeyring, chatbotId, orgId)
  })
  afterAll(async () => {
    await db?.drop()
  })

  function record<T extends EventType>(
    streamType: 'conversation' | 'analysis',
    streamId: string,
    streamVersion: number,
    type: T,
    payload: EventPayload<T>,
  ): JournalRecord {
    position += 65_536n
    return sealedRecord(
      { key, orgId, chatbotId, streamType, streamId, streamVersion, position },
      type,
      payload,
    )
  }

  const TOPICS = ['say "hi"', 'back\\slash', 'a,b', '{x}', 'NULL', "can't log in", 'é ü']

  function conversation() {
    const id = randomUUID()
    return {
      id,
      capture: record('conversation', id, 1, 'conversation.messages-captured', {
        messages: [{ id: 'm1', role: 'user', content: 'hello', sentAt: '2026-11-20T12:00:00.000Z' }],
        receivedAt: '2026-11-20T12:00:00.000Z',
        analysisRequested: true,
      }),
      result: record('analysis', id, 1, 'analysis.messages-analyzed', {
        analyzer: { name: 'test', version: '1' },
        signalsDecided: true,
        results: [
          {
            messageId: 'm1',
            sentiment: { score: 0.5, label: 'positive' },
            topics: TOPICS.map((t) => ({ id: t, label: t })),
          },
        ],
      }),
    }
  }

  async function apply(records: JournalRecord[]) {
    await withTransaction(db.pool, (client) =>
      applyToReadModels(client, testKeyring, records, { applied: 0, dropped: {} }),
    )
  }

  async function topicsOf(conversationId: string): Promise<string[]> {
    const { rows } = await db.pool.query<{ topics: string[] }>(
      'SELECT topics FROM rm_messages WHERE conversation_id = $1',
      [conversationId],
    )
    return rows[0]!.topics
  }

  it('keep topic ids exactly, inserted with their capture in one batch', async () => {
    const c = conversation()
    await apply([c.capture, c.result])
    expect(await topicsOf(c.id)).toEqual(TOPICS)
  })

  it('keep topic ids exactly, written onto a stored message by a later batch', async () => {
    const c = conversation()
    await apply([c.capture])
    await apply([c.result])
    expect(await topicsOf(c.id)).toEqual(TOPICS)
  })

  it('keep their results when the capture is sent again (the stored row read back, then written)', async () => {
    const c = conversation()
    await apply([c.capture])
    await apply([c.result])
    const again = record('conversation', c.id, 2, 'conversation.messages-captured', {
      messages: [{ id: 'm1', role: 'user', content: 'hello', sentAt: '2026-11-20T12:00:00.000Z' }],
      receivedAt: '2026-11-20T12:01:00.000Z',
      analysisRequested: false,
    })
    await apply([again])
    const { rows } = await db.pool.query<{ topics: string[]; sentiment_label: string; content: string }>(
      'SELECT topics, sentiment_label, content FROM rm_messages WHERE conversation_id = $1',
      [c.id],
    )
    expect(rows).toEqual([{ topics: TOPICS, sentiment_label: 'positive', content: 'hello' }])
  })

  it("keep an end-user message's language when a later result (a move to another topic) says none", async () => {
    const c = conversation()
    const withLanguage = (streamVersion: number, language: string | undefined) =>
      record('analysis', c.id, streamVersion, 'analysis.messages-analyzed', {
        analyzer: { name: 'test', version: '1' },
        signalsDecided: language !== undefined,
        results: [{ messageId: 'm1', sentiment: { score: 0.5, label: 'positive' }, topics: [], language }],
      })
    const languageOf = async () =>
      (
        await db.pool.query<{ language: string | null }>(
          'SELECT language FROM rm_messages WHERE conversation_id = $1',
          [c.id],
        )
      ).rows[0]!.language
    await apply([c.capture])
    expect(await languageOf()).toBeNull()
    await apply([withLanguage(1, 'es')])
    expect(await languageOf()).toBe('es')
    await apply([withLanguage(2, undefined)])
    expect(await languageOf()).toBe('es')
    // Captured again with a result in the same batch (the content upsert): the new language replaces it.
    const again = record('conversation', c.id, 2, 'conversation.messages-captured', {
      messages: [{ id: 'm1', role: 'user', content: 'hello', sentAt: '2026-11-20T12:00:00.000Z' }],
      receivedAt: '2026-11-20T12:01:00.000Z',
      analysisRequested: true,
    })
    await apply([again, withLanguage(3, 'en')])
    expect(await languageOf()).toBe('en')
    await apply([again, withLanguage(4, undefined)])
    expect(await languageOf()).toBe('en')
  })

  it('keep the analyzer that read a message when a later result only moves it to another topic', async () => {
    // A re-clustering's move names the analyzer running then, which read nothing (signalsDecided false):
    // after an upgrade the moved messages counted as read by the new analyzer (GET …/analyzers).
    const c = conversation()
    const moved = (streamVersion: number, topic: string) =>
      record('analysis', c.id, streamVersion, 'analysis.messages-analyzed', {
        analyzer: { name: 'test', version: '2' },
        signalsDecided: false,
        results: [
          {
            messageId: 'm1',
            sentiment: { score: 0.5, label: 'positive' },
            topics: [{ id: topic, label: topic }],
          },
        ],
      })
    const stored = async () =>
      (
        await db.pool.query<{ analyzer: string | null; topics: string[]; sentiment_label: string | null }>(
          'SELECT analyzer, topics, sentiment_label FROM rm_messages WHERE conversation_id = $1',
          [c.id],
        )
      ).rows[0]
    await apply([c.capture, c.result])
    // Results alone (the results upsert): moved, read by the same analyzer.
    await apply([moved(2, 'moved')])
    expect(await stored()).toEqual({ analyzer: 'test@1', topics: ['moved'], sentiment_label: 'positive' })
    // Captured again with a move in the same batch (the content upsert): the same.
    const again = record('conversation', c.id, 2, 'conversation.messages-captured', {
      messages: [{ id: 'm1', role: 'user', content: 'hello', sentAt: '2026-11-20T12:00:00.000Z' }],
      receivedAt: '2026-11-20T12:01:00.000Z',
      analysisRequested: false,
    })
    await apply([again, moved(3, 'moved again')])
    expect(await stored()).toEqual({
      analyzer: 'test@1',
      topics: ['moved again'],
      sentiment_label: 'positive',
    })
    // A result the analyzer decided names it.
    const read = record('analysis', c.id, 4, 'analysis.messages-analyzed', {
      analyzer: { name: 'test', version: '2' },
      signalsDecided: true,
      results: [{ messageId: 'm1', sentiment: { score: -0.5, label: 'negative' }, topics: [] }],
    })
    await apply([read])
    expect(await stored()).toEqual({ analyzer: 'test@2', topics: [], sentiment_label: 'negative' })
  })

  it("count an end-user message's language once in its hour, however often its events are applied", async () => {
    const c = conversation()
    const spoken = (streamVersion: number, language: string) =>
      record('analysis', c.id, streamVersion, 'analysis.messages-analyzed', {
        analyzer: { name: 'test', version: '1' },
        signalsDecided: true,
        results: [{ messageId: 'm1', sentiment: { score: 0.5, label: 'positive' }, topics: [], language }],
      })
    const counts = async () =>
      (
        await db.pool.query<{ hour: Date; language: string; messages: number }>(
          'SELECT hour, language, messages FROM rm_hourly_languages WHERE chatbot_id = $1',
          [chatbotId],
        )
      ).rows.map((r) => `${r.hour.toISOString()} ${r.language} ${r.messages}`)
    await db.pool.query('DELETE FROM rm_hourly_languages WHERE chatbot_id = $1', [chatbotId])
    const es = spoken(1, 'es')
    await apply([c.capture, es])
    expect(await counts()).toEqual(['2026-11-20T12:00:00.000Z es 1'])
    // Redelivered: the same result, the same capture, and both again in one batch
    await apply([es])
    await apply([c.capture])
    await apply([c.capture, es])
    expect(await counts()).toEqual(['2026-11-20T12:00:00.000Z es 1'])
    // A re-analysis that reads another language moves the count; the hour that held it is gone
    await apply([spoken(2, 'en')])
    expect(await counts()).toEqual(['2026-11-20T12:00:00.000Z en 1'])
  })

  it('are written by statements prepared once per connection (named), not parsed and planned each time', async () => {
    const client = await db.pool.connect()
    try {
      const c = conversation()
      const onThisConnection = async (records: JournalRecord[]) => {
        await client.query('BEGIN')
        await applyToReadModels(client, testKeyring, records, { applied: 0, dropped: {} })
        await client.query('COMMIT')
      }
      await onThisConnection([c.capture])
      await onThisConnection([c.result])
      const { rows } = await client.query<{ name: string }>('SELECT name FROM pg_prepared_statements')
      expect(rows.map((r) => r.name)).toEqual(
        expect.arrayContaining([
          'cas-messages-insert-new',
          returningOld ? 'cas-messages-upsert-results' : 'cas-messages-upsert-results-pre18',
          'cas-conversations-insert',
          'cas-conversations-lock',
          'cas-projector-erased-conversations',
        ]),
      )
      if (returningOld) {
        // The results' upsert returns the stored rows it replaced: no statement locks them first.
        expect(rows.map((r) => r.name)).not.toContain('cas-messages-lock')
      } else {
        // Before 18 (no RETURNING OLD) a statement locks and reads them first.
        expect(rows.map((r) => r.name)).toContain('cas-messages-lock')
      }
      expect(await topicsOf(c.id)).toEqual(TOPICS)
    } finally {
      client.release()
    }
  })
})
