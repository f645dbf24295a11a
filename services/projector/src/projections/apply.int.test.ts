/**
 * The set-based apply gives, row for row, the read models that applying the same events one at a time
 * gives, however the events are cut into batches: interleaved conversations, analysis before and after
 * capture, re-analysis (twice in one batch), metadata changes, a message captured twice, an erasure and
 * a chatbot deletion with events after them.
 */
import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import type { JournalRecord } from '@cas/eventlog'
import type { EventPayload, EventType } from '@cas/events'
import { dataKeyFor } from '@cas/keyring'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { testKeyring } from '../../../../test/support/keyring.ts'
import { sealedRecord } from '../../test/sealed-record.ts'
import { READ_MODEL_TABLES } from '../rebuild.ts'
import { applyToReadModels, type ProjectionStats } from './apply.ts'

let db: TestDatabase
const orgId = randomUUID()
const kept = randomUUID()
const doomed = randomUUID()
const keys = new Map<string, Buffer>()

beforeAll(async () => {
  db = await createTestDatabase()
  for (const chatbotId of [kept, doomed])
    keys.set(chatbotId, await dataKeyFor(db.pool, testKeyring, chatbotId, orgId))
})
afterAll(async () => {
  await db?.drop()
})

/** Builds journal records as the gateway and the analysis service append them: sealed, in order. */
function journal() {
  const records: JournalRecord[] = []
  const versions = new Map<string, number>()
  let position = 1_000n
  const append = <T extends EventType>(
    chatbotId: string,
    streamType: 'conversation' | 'analysis' | 'chatbot',
    streamId: string,
    type: T,
    payload: EventPayload<T>,
    occurredAt = '2026-11-20T12:00:00.000Z',
  ) => {
    const stream = `${streamType}/${streamId}`
    const streamVersion = (versions.get(stream) ?? 0) + 1
    versions.set(stream, streamVersion)
    position += 65_536n
    records.push(
      sealedRecord(
        {
          key: keys.get(chatbotId)!,
          orgId,
          chatbotId,
          streamType,
          streamId,
          streamVersion,
          position,
          occurredAt,
        },
        type,
        payload,
      ),
    )
  }
  return { records, append }
}

const metadata = (user: Record<string, string>, session: Record<string, string> = {}) => ({
  user,
  organization: {},
  session,
  custom: { tier: 'gold' },
})
const message = (id: string, role: 'user' | 'assistant', sentAt: string, content = `text of ${id}`) => ({
  id,
  role,
  content,
  sentAt,
})
const results = (...r: [string, number, 'positive' | 'neutral' | 'negative', string[]][]) => ({
  analyzer: { name: 'test', version: String(r.length) },
  results: r.map(([messageId, score, label, topics]) => ({
    messageId,
    sentiment: { score, label },
    topics: topics.map((t) => ({ id: t, label: t })),
  })),
})

/** An interleaved journal touching every rule of the projection. */
function workload(): JournalRecord[] {
  const { records, append } = journal()
  const [c1, c2, c3, c4, c5, c6] = Array.from({ length: 6 }, () => randomUUID()) as [
    string,
    string,
    string,
    string,
    string,
    string,
  ]
  const captured = (messages: ReturnType<typeof message>[]) => ({
    messages,
    receivedAt: '2026-11-20T12:00:00.000Z',
    analysisRequested: true,
  })
  append(kept, 'chatbot', kept, 'chatbot.created', {
    name: 'kept',
    settings: {},
    apiKeyPrefix: 'svc_live_abcd…',
  })
  // Analysis runs ahead of the conversation (another topic): results before the messages exist.
  append(kept, 'analysis', c1, 'analysis.messages-analyzed', results(['m1', 0.5, 'positive', ['refunds']]))
  append(kept, 'analysis', c1, 'analysis.conversation-analyzed', {
    analyzer: { name: 'test', version: '1' },
    sentiment: { score: 0.5, label: 'positive' },
    assistantSentiment: null,
    topics: [{ id: 'refunds', label: 'refunds' }],
  })
  // A metadata change of a conversation with no row yet changes nothing.
  append(kept, 'conversation', c4, 'conversation.metadata-updated', metadata({ id: 'ghost' }))
  append(kept, 'conversation', c1, 'conversation.started', {
    conversationId: 'c-1',
    ...metadata({ id: 'u1' }),
  })
  append(
    kept,
    'conversation',
    c1,
    'conversation.messages-captured',
    captured([
      message('m1', 'user', '2026-11-20T10:05:00.000Z'),
      message('m2', 'assistant', '2026-11-20T10:06:00.000Z'),
    ]),
    '2026-11-20T10:06:01.000Z',
  )
  append(kept, 'conversation', c2, 'conversation.started', { conversationId: 'c-2', ...metadata({}) })
  append(
    kept,
    'conversation',
    c2,
    'conversation.messages-captured',
    captured([message('a', 'user', '2026-11-20T10:30:00.000Z')]),
  )
  append(
    kept,
    'analysis',
    c1,
    'analysis.messages-analyzed',
    results(['m2', -0.25, 'negative', ['billing', 'refunds']]),
  )
  append(
    kept,
    'conversation',
    c4,
    'conversation.messages-captured',
    captured([message('x', 'user', '2026-11-20T09:00:00.000Z')]),
  )
  // The end user changes: activity rows keep the one a capture had, and a later capture without one keeps it.
  append(
    kept,
    'conversation',
    c1,
    'conversation.metadata-updated',
    metadata({ id: 'u2' }, { device: 'ios' }),
    '2026-11-20T11:00:00.000Z',
  )
  append(kept, 'conversation', c2, 'conversation.metadata-updated', metadata({ id: 'u3' }))
  append(
    kept,
    'conversation',
    c2,
    'conversation.messages-captured',
    captured([message('b', 'assistant', '2026-11-20T10:31:00.000Z')]),
  )
  append(
    kept,
    'conversation',
    c1,
    'conversation.messages-captured',
    captured([
      message('m3', 'user', '2026-11-20T11:01:00.000Z'),
      message('m4', 'user', '2026-11-20T09:59:00.000Z'),
    ]),
    '2026-11-20T11:01:02.000Z',
  )
  append(kept, 'conversation', c2, 'conversation.metadata-updated', metadata({ plan: 'pro' }))
  append(
    kept,
    'conversation',
    c2,
    'conversation.messages-captured',
    captured([message('c', 'user', '2026-11-20T10:45:00.000Z')]),
  )
  // Re-analysis, twice in a row, and an analysis after capture.
  append(
    kept,
    'analysis',
    c1,
    'analysis.messages-analyzed',
    results(['m1', 0, 'neutral', ['shipping']], ['m3', 0.75, 'positive', []]),
  )
  append(
    kept,
    'analysis',
    c1,
    'analysis.messages-analyzed',
    results(['m1', -1, 'negative', ['shipping', 'refunds']]),
  )
  append(
    kept,
    'analysis',
    c2,
    'analysis.messages-analyzed',
    results(['a', 0.5, 'positive', ['refunds']], ['b', 0.5, 'positive', ['refunds']]),
  )
  append(kept, 'analysis', c2, 'analysis.conversation-analyzed', {
    analyzer: { name: 'test', version: '1' },
    sentiment: { score: 0.5, label: 'positive' },
    assistantSentiment: null,
    topics: [
      { id: 'refunds', label: 'refunds' },
      { id: 'billing', label: 'billing' },
    ],
  })
  // A message captured again (content replaced, counted again with its result).
  append(
    kept,
    'conversation',
    c2,
    'conversation.messages-captured',
    captured([message('a', 'user', '2026-11-20T13:30:00.000Z', 'edited')]),
  )
  // An erased conversation: its rows go, the rollups take it back, later events are dropped.
  append(kept, 'conversation', c3, 'conversation.started', {
    conversationId: 'c-3',
    ...metadata({ id: 'u1' }),
  })
  append(
    kept,
    'conversation',
    c3,
    'conversation.messages-captured',
    captured([
      message('q', 'user', '2026-11-20T10:10:00.000Z'),
      message('r', 'assistant', '2026-11-20T10:11:00.000Z'),
    ]),
  )
  append(kept, 'analysis', c3, 'analysis.messages-analyzed', results(['q', 0.25, 'positive', ['refunds']]))
  append(kept, 'conversation', c3, 'conversation.erased', { reason: 'end-user-erasure' })
  append(kept, 'analysis', c3, 'analysis.messages-analyzed', results(['r', -0.5, 'negative', ['refunds']]))
  append(kept, 'analysis', c3, 'analysis.conversation-analyzed', {
    analyzer: { name: 'test', version: '1' },
    sentiment: { score: 0.5, label: 'positive' },
    assistantSentiment: null,
    topics: [],
  })
  // The same hour gets messages again after the erasure.
  append(
    kept,
    'conversation',
    c4,
    'conversation.messages-captured',
    captured([message('y', 'assistant', '2026-11-20T10:12:00.000Z')]),
  )
  // A deleted chatbot: everything of it goes, and what comes after is dropped.
  append(doomed, 'conversation', c5, 'conversation.started', {
    conversationId: 'c-5',
    ...metadata({ id: 'u9' }),
  })
  append(
    doomed,
    'conversation',
    c5,
    'conversation.messages-captured',
    captured([message('d', 'user', '2026-11-20T10:20:00.000Z')]),
  )
  append(doomed, 'analysis', c5, 'analysis.messages-analyzed', results(['d', 0.5, 'positive', ['refunds']]))
  append(doomed, 'chatbot', doomed, 'chatbot.deleted', {})
  append(doomed, 'analysis', c6, 'analysis.messages-analyzed', results(['e', 0.5, 'positive', ['refunds']]))
  append(
    doomed,
    'conversation',
    c5,
    'conversation.messages-captured',
    captured([message('f', 'user', '2026-11-20T10:20:00.000Z')]),
  )
  append(
    kept,
    'conversation',
    c1,
    'conversation.messages-captured',
    captured([message('m5', 'assistant', '2026-11-20T11:02:00.000Z')]),
    '2026-11-20T11:02:01.000Z',
  )
  append(
    kept,
    'analysis',
    c1,
    'analysis.messages-analyzed',
    results(['m5', 0.25, 'positive', ['billing']], ['m4', 0, 'neutral', []]),
  )
  return records
}

/** Read-model tables of their own in a schema, so that each way of applying starts from nothing. */
async function freshSchema(): Promise<string> {
  const schema = `apply_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  await withTransaction(db.pool, async (client) => {
    await client.query(`CREATE SCHEMA ${schema}`)
    for (const table of READ_MODEL_TABLES)
      await client.query(`CREATE TABLE ${schema}.${table} (LIKE public.${table} INCLUDING ALL)`)
  })
  return schema
}

/** Applies the records in transactions of the given sizes (cycled), into a fresh schema. */
async function applyInBatches(records: readonly JournalRecord[], sizes: readonly number[]) {
  const schema = await freshSchema()
  const stats: ProjectionStats = { applied: 0, dropped: {} }
  for (let i = 0, b = 0; i < records.length; b++) {
    const size = sizes[b % sizes.length]!
    const batch = records.slice(i, i + size)
    i += size
    await withTransaction(db.pool, async (client) => {
      await client.query(`SET LOCAL search_path TO ${schema}, public`)
      await applyToReadModels(client, testKeyring, batch, stats)
    })
  }
  const tables: Record<string, string[]> = {}
  for (const table of READ_MODEL_TABLES) {
    const { rows } = await db.pool.query<{ row: string }>(
      `SELECT to_jsonb(t)::text AS row FROM ${schema}.${table} t`,
    )
    tables[table] = rows.map((r) => r.row).sort()
  }
  return { tables, stats }
}

describe('the set-based apply', () => {
  it('gives the read models of applying one event at a time, however the batches are cut', async () => {
    const records = workload()
    const oneByOne = await applyInBatches(records, [1])
    expect(oneByOne.stats.dropped).toEqual({ conversation_erased: 2, chatbot_deleted: 2 })
    expect(oneByOne.tables.rm_conversations).toHaveLength(3)
    expect(oneByOne.tables.rm_messages!.length).toBeGreaterThan(5)
    expect(oneByOne.tables.rm_erased_conversations).toHaveLength(1)
    expect(oneByOne.tables.rm_deleted_chatbots).toHaveLength(1)
    // Worked out by hand from the workload: the erased conversation and the deleted chatbot leave
    // nothing; m1's results are replaced twice; 'a', captured again at 13h, is counted there too.
    const rows = (table: string) => oneByOne.tables[table]!.map((r) => JSON.parse(r))
    const hours = rows('rm_hourly_stats')
      .map((h) => [
        h.hour.slice(11, 13),
        h.messages,
        h.user_messages,
        h.assistant_messages,
        Number(h.sentiment_sum),
        h.sentiment_count,
        h.positive,
        h.neutral,
        h.negative,
        Number(h.assistant_sentiment_sum),
        h.assistant_sentiment_count,
        h.assistant_positive,
        h.assistant_neutral,
        h.assistant_negative,
      ])
      .sort()
    // Sentiment: the end users' messages, then the assistant's (m2 -0.25 and b 0.5 at 10h, m5 0.25 at 11h).
    expect(hours).toEqual([
      ['09', 2, 2, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0],
      ['10', 6, 3, 3, -0.5, 2, 1, 0, 1, 0.25, 2, 1, 0, 1],
      ['11', 2, 1, 1, 0.75, 1, 1, 0, 0, 0.25, 1, 1, 0, 0],
      ['13', 1, 1, 0, 0.5, 1, 1, 0, 0, 0, 0, 0, 0, 0],
    ])
    // Topics of the end users' messages only (m2, b and m5 are the assistant's), with their sentiment.
    const topics = rows('rm_hourly_topics')
      .map((t) => `${t.hour.slice(11, 13)} ${t.topic} ${t.messages} ${Number(t.sentiment_sum)}`)
      .sort()
    expect(topics).toEqual(['10 refunds 2 -0.5', '10 shipping 1 -1', '13 refunds 1 0.5'])
    const conversations = rows('rm_conversations')
      .map((c) => [c.external_id, c.message_count, c.stream_version, c.end_user_id, c.sentiment_label])
      .sort()
    expect(conversations).toEqual([
      // Started by no event of its own (a metadata change before any row changed nothing).
      [null, 2, 3, null, null],
      ['c-1', 5, 5, 'u2', 'positive'],
      ['c-2', 4, 7, null, 'positive'],
    ])
    for (const sizes of [[records.length], [2], [3, 7], [5, 1, 11], [13]]) {
      const batched = await applyInBatches(records, sizes)
      expect(batched.stats, `batches of ${sizes.join(', ')}`).toEqual(oneByOne.stats)
      for (const table of READ_MODEL_TABLES)
        expect(batched.tables[table], `${table}, batches of ${sizes.join(', ')}`).toEqual(
          oneByOne.tables[table],
        )
    }
  })

  it('keeps the end user a conversation had when each message was captured', async () => {
    const { tables } = await applyInBatches(workload(), [100])
    const activity = tables.rm_hourly_activity!.map(
      (r) => JSON.parse(r) as { hour: string; end_user_id: string | null },
    )
    // c1: u1 at 10h, then u2 (9h and 11h); c2: u3 at 10h (kept by a later capture without one), none at
    // 13h; c4 never had one.
    expect(activity.map((a) => a.end_user_id ?? '-').sort()).toEqual(['-', '-', '-', 'u1', 'u2', 'u2', 'u3'])
  })
})
