/**
 * The conversation list filtered by a signal (`signal=`) for one chatbot that has the signal off: the answer
 * is empty (the list follows the signals report, issue 32), and the statement used to walk all of the
 * chatbot's conversations to find that out (99,000 rows read for a chatbot of 99,000: bench/FINDINGS.md).
 * Now the chatbot's test is made once, before the scan, and no conversation is read; every other answer is
 * the one the rows say it must be.
 */
import { randomUUID } from 'node:crypto'
import { withOrgScope } from '@cas/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { rowsRead } from '../../../test/support/plan-rows.ts'
import {
  type ConversationFilters,
  listConversations,
  listConversationsQuery,
  type PageKey,
} from './repositories/conversations.ts'

const ORG = randomUUID()
/** 20,000 conversations; 2,000; 1,000 of a chatbot the projector has not written a row for yet. */
const [big, small, unprojected] = [randomUUID(), randomUUID(), randomUUID()]
const SIGNAL = 'bot_failure'
const LIMIT = 20
let db: TestDatabase
/** The version of the big chatbot's stream its last change of SIGNAL had. */
let version = 1

beforeAll(async () => {
  db = await createTestDatabase()
  // Conversation n's last message at minute n, of the big chatbot for 20 n in 23, of the small one for
  // 2 and of the unprojected one for 1 (the three interleaved); every third carries the signal.
  await db.pool.query(
    `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, message_count, first_message_at,
       last_message_at)
     SELECT gen_random_uuid(), $1, CASE WHEN n % 23 < 20 THEN $2::uuid WHEN n % 23 < 22 THEN $3::uuid ELSE $4::uuid END,
            'c-' || n, 2, at, at
       FROM generate_series(1, 23000) n, LATERAL (SELECT timestamptz '2026-11-01' + n * interval '1 minute' AS at) x`,
    [ORG, big, small, unprojected],
  )
  await db.pool.query(
    `INSERT INTO rm_conversation_signals (org_id, chatbot_id, conversation_id, signal, confidence, evidence, analyzer)
     SELECT org_id, chatbot_id, id, $1, 0.8, '{}', 'test' FROM rm_conversations
      WHERE substr(external_id, 3)::int % 3 = 0`,
    [SIGNAL],
  )
  await db.pool.query(
    `INSERT INTO rm_chatbots (id, org_id, name, api_key_prefix, settings, created_at, stream_version)
     VALUES ($1, $3, 'big', 'k', '{}', '2026-11-01', 1), ($2, $3, 'small', 'k', '{}', '2026-11-01', 1)`,
    [big, small, ORG],
  )
  for (const bot of [big, small]) {
    await db.pool.query(
      `INSERT INTO rm_signal_periods (org_id, chatbot_id, signal, on_since, since_creation, on_version)
       VALUES ($1, $2, $3, '2026-11-01', true, 1)`,
      [ORG, bot, SIGNAL],
    )
  }
  await db.pool.query('ANALYZE rm_conversations, rm_conversation_signals, rm_chatbots, rm_signal_periods')
})
afterAll(() => db.drop())

/** The big chatbot turns SIGNAL off or on again, as the projector records it from a settings change. */
async function turn(on: boolean) {
  version++
  await db.pool.query(
    on
      ? `INSERT INTO rm_signal_periods (org_id, chatbot_id, signal, on_since, since_creation, on_version)
         VALUES ($1, $2, $3, now(), false, $4)`
      : `UPDATE rm_signal_periods SET off_since = now(), off_version = $4
          WHERE org_id = $1 AND chatbot_id = $2 AND signal = $3 AND off_since IS NULL`,
    [ORG, big, SIGNAL, version],
  )
}

/** One page of the list as the route reads it (the reader role, scoped to the organization). */
const page = (filters: ConversationFilters, after?: PageKey) =>
  withOrgScope(db.readerPool, ORG, (client) => listConversations(client, ORG, filters, LIMIT, after))

/** What a page must hold: the conversations of `listed` chatbots that carry SIGNAL, newest first. */
async function expectedPage(listed: readonly string[], after?: PageKey) {
  const { rows } = await db.pool.query<{ id: string }>(
    `SELECT c.id FROM rm_conversations c JOIN rm_conversation_signals s ON s.conversation_id = c.id
      WHERE s.signal = $1 AND c.chatbot_id = ANY($2::uuid[])
        AND ($3::timestamptz IS NULL OR (c.last_message_at, c.id) < ($3, $4::uuid))
      ORDER BY c.last_message_at DESC, c.id DESC LIMIT $5`,
    [SIGNAL, listed, after?.lastMessageAt ?? null, after?.id ?? null, LIMIT + 1],
  )
  return rows.map((r) => r.id)
}

/** The rows of `table` the big chatbot's first page by SIGNAL reads (EXPLAIN ANALYZE, as the route runs it). */
const read = (table: string) => {
  const { sql, params } = listConversationsQuery(ORG, { chatbotId: big, signal: SIGNAL }, LIMIT)
  return withOrgScope(db.readerPool, ORG, (client) => rowsRead(client, table, sql, params))
}

/** The first two pages' ids (each with the next page's first row, as listConversations reads them). */
async function twoPages(filters: ConversationFilters) {
  const first = await page(filters)
  const last = first[LIMIT - 1]!
  const second = await page(filters, { lastMessageAt: last.last_message_at.toISOString(), id: last.id })
  return [first.map((r) => r.id), second.map((r) => r.id)]
}

describe('the conversation list by a signal, for a chatbot that has it off', () => {
  it('answers the empty page without reading a conversation, and the same pages once it is on again', async () => {
    const before = await twoPages({ chatbotId: big, signal: SIGNAL })
    expect(before[0]).toEqual(await expectedPage([big]))
    expect(before[0]).toHaveLength(LIMIT + 1)

    await turn(false)
    expect(await page({ chatbotId: big, signal: SIGNAL })).toEqual([])
    expect(await read('rm_conversations')).toBe(0)
    expect(await read('rm_conversation_signals')).toBe(0)

    await turn(true)
    expect(await twoPages({ chatbotId: big, signal: SIGNAL })).toEqual(before)
    // On again, the scan reads a page's worth of the chatbot's conversations, not none.
    expect(await read('rm_conversations')).toBeGreaterThan(LIMIT)
  })

  it('lists as before for a chatbot with the signal on, one without a row, and across chatbots', async () => {
    await turn(false)
    try {
      expect(await page({ chatbotId: small, signal: SIGNAL }).then((rows) => rows.map((r) => r.id))).toEqual(
        await expectedPage([small]),
      )
      expect(
        await page({ chatbotId: unprojected, signal: SIGNAL }).then((rows) => rows.map((r) => r.id)),
      ).toEqual(await expectedPage([unprojected]))
      // Across the organization: the small chatbot's and the unprojected one's, none of the big one's.
      const across = await page({ signal: SIGNAL })
      expect(across.map((r) => r.id)).toEqual(await expectedPage([small, unprojected]))
      const next = across[LIMIT - 1]!
      const after = { lastMessageAt: next.last_message_at.toISOString(), id: next.id }
      expect(await page({ signal: SIGNAL }, after).then((rows) => rows.map((r) => r.id))).toEqual(
        await expectedPage([small, unprojected], after),
      )
    } finally {
      await turn(true)
    }
  })
})
