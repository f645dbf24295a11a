/**
 * The signals report's count of conversations still within their quiet period (abandonmentPending) reads
 * the conversations in that period, not every conversation of the range: a chatbot of 20,000 conversations
 * over two weeks, 29 of them in the last half hour. The bound on last_message_at was written
 * `last_message_at + quiet > now`, which no index serves, so each signals read walked the whole range.
 */
import { randomUUID } from 'node:crypto'
import { withOrgScope } from '@cas/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { rowsRead } from '../../../test/support/plan-rows.ts'
import { ABANDONMENT_PENDING_SQL, readAbandonmentPending } from './repositories/abandonment-pending.ts'

const ORG = randomUUID()
const CHATBOT = randomUUID()
const QUIET_MS = 30 * 60_000
const NOW = new Date('2026-11-15T00:00:00Z')
const SCOPE = {
  orgId: ORG,
  chatbotId: CHATBOT,
  from: new Date('2026-11-01T00:00:00Z'),
  to: new Date('2026-11-16T00:00:00Z'),
}
let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
  await db.pool.query(
    `INSERT INTO rm_chatbots (id, org_id, name, api_key_prefix, settings, created_at, stream_version)
     VALUES ($1, $2, 'busy', 'k', '{}', '2026-11-01', 1)`,
    [CHATBOT, ORG],
  )
  // Conversation n's last message n minutes before NOW: 1 … 29 within the 30-minute quiet period, the rest older.
  await db.pool.query(
    `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, message_count, first_message_at,
       last_message_at)
     SELECT gen_random_uuid(), $1, $2, 'c-' || n, 2, at, at
       FROM generate_series(1, 20000) n, LATERAL (SELECT $3::timestamptz - n * interval '1 minute' AS at) x`,
    [ORG, CHATBOT, NOW],
  )
  await db.pool.query(
    `INSERT INTO rm_messages (conversation_id, message_id, org_id, chatbot_id, role, content, sent_at, arrival)
     SELECT id, 'm-' || external_id, org_id, chatbot_id, 'user', 'hello', last_message_at, 1
       FROM rm_conversations WHERE chatbot_id = $1`,
    [CHATBOT],
  )
  await db.pool.query('ANALYZE rm_conversations, rm_messages, rm_chatbots')
})
afterAll(() => db.drop())

describe('abandonmentPending on a chatbot with a long range', () => {
  it('counts the conversations within their quiet period, and reads only those', async () => {
    // Given: 20,000 conversations in range, those of the last 30 minutes (1 … 29) still waiting
    const pending = await withOrgScope(db.readerPool, ORG, (client) =>
      readAbandonmentPending(client, SCOPE, NOW),
    )
    expect(pending.conversations).toBe(29)
    expect(pending.nextDueAt).toBe(new Date(NOW.getTime() - 29 * 60_000 + QUIET_MS).toISOString())

    // Then: the statement reads about the waiting conversations from rm_conversations, not the range's 20,000
    const read = await rowsRead(db.pool, 'rm_conversations', ABANDONMENT_PENDING_SQL, [
      ORG,
      SCOPE.from,
      SCOPE.to,
      [CHATBOT],
      [QUIET_MS],
      NOW,
    ])
    expect(read).toBeLessThan(100)
  })
})
