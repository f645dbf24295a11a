/**
 * Erasing an end user's conversations, and retention: gone from the journal, the write side, every read
 * model (rollups adjusted exactly) and the analysis state, and a rebuild from the log (the journal, or
 * Kafka from the earliest offset, where the erased conversation's earlier events still are) doesn't bring
 * them back. In both modes.
 */
import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import { READ_MODEL_TABLES, rebuildReadModels } from '@cas/service-projector/rebuild'
import type { FastifyInstance } from 'fastify'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import type { TestDatabase } from './support/database.ts'
import { testKeyring } from './support/keyring.ts'
import { EVENT_LOG_MODES, startLiveProjector, startPipeline, type TestPipeline } from './support/pipeline.ts'
import { sweepRetention } from './support/retention.ts'

for (const mode of EVENT_LOG_MODES) {
  describe.skipIf(!mode.available)(`erasure and retention, ${mode.name} mode`, () => {
    let pipeline: TestPipeline
    let db: TestDatabase
    let app: FastifyInstance
    let clock: Date
    let cookie: string
    let orgId: string
    let projected: () => Promise<void>
    const cleanups: (() => Promise<unknown>)[] = []

    beforeEach(async () => {
      clock = new Date('2026-11-20T12:00:00Z')
      pipeline = await startPipeline(mode.name, cleanups, {}, () => clock)
      ;({ db, app } = pipeline)
      ;({ projected } = await startLiveProjector(pipeline, cleanups))
      const me = await signUp(app)
      cookie = me.cookie
      orgId = me.organization.id
    })
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
    })

    async function capture(apiKey: string, conversationId: string, userId: string, sentAt: string) {
      const res = await postCapture(app, apiKey, {
        conversationId,
        messages: [
          { id: 'q', role: 'user', content: `private question of ${userId}`, sentAt },
          { id: 'a', role: 'assistant', content: 'an answer', sentAt },
        ],
        user: { id: userId },
      })
      expect(res.statusCode).toBe(200)
      return res.json().conversationId as string
    }

    async function analyze(chatbotId: string, conversationId: string) {
      await withTransaction(db.pool, (client) =>
        appendToStream(client, {
          streamType: 'analysis',
          streamId: conversationId,
          orgId,
          chatbotId,
          expectedVersion: 'any',
          events: [
            newEvent('analysis.messages-analyzed', {
              analyzer: { name: 'test', version: '1' },
              signalsDecided: true,
              results: [
                {
                  messageId: 'q',
                  sentiment: { score: 0.5, label: 'positive' },
                  topics: [{ id: 'privacy', label: 'privacy' }],
                },
              ],
            }),
          ],
        }),
      )
    }

    async function readModels() {
      const tables: Record<string, string[]> = {}
      for (const table of READ_MODEL_TABLES) {
        const { rows } = await db.pool.query<{ row: string }>(
          `SELECT to_jsonb(t)::text AS row FROM ${table} t`,
        )
        tables[table] = rows.map((r) => r.row).sort()
      }
      return tables
    }

    async function totals(chatbotId: string) {
      const { rows } = await db.pool.query(
        `SELECT (SELECT coalesce(sum(messages), 0)::int FROM rm_hourly_stats WHERE chatbot_id = $1) AS messages,
            (SELECT coalesce(sum(sentiment_count), 0)::int FROM rm_hourly_stats WHERE chatbot_id = $1) AS analyzed,
            (SELECT coalesce(sum(messages), 0)::int FROM rm_hourly_topics WHERE chatbot_id = $1) AS topics,
            (SELECT count(*)::int FROM rm_hourly_activity WHERE chatbot_id = $1) AS active,
            (SELECT count(*)::int FROM rm_conversations WHERE chatbot_id = $1) AS conversations`,
        [chatbotId],
      )
      return rows[0]
    }

    /** Whatever of these conversations is left anywhere we keep data (journal events other than the erasure). */
    async function traces(conversationIds: string[]) {
      const { rows } = await db.pool.query(
        `SELECT 'journal' AS place, type FROM event_journal WHERE stream_id = ANY($1) AND type <> 'conversation.erased'
     UNION ALL SELECT 'capture', external_id FROM capture_conversations WHERE id = ANY($1)
     UNION ALL SELECT 'messages', message_id FROM rm_messages WHERE conversation_id = ANY($1)
     UNION ALL SELECT 'conversations', id::text FROM rm_conversations WHERE id = ANY($1)
     UNION ALL SELECT 'activity', conversation_id::text FROM rm_hourly_activity WHERE conversation_id = ANY($1)
     UNION ALL SELECT 'jobs', id::text FROM analysis_jobs WHERE conversation_id = ANY($1)`,
        [conversationIds],
      )
      return rows
    }

    describe('DELETE /api/v1/chatbots/:id/users/:userId', () => {
      it("erases the end user's conversations everywhere, adjusts the rollups, and a rebuild keeps them out", async () => {
        const { chatbot, apiKey } = await createChatbot(app, cookie)
        const ada = [
          await capture(apiKey, 'ada-1', 'ada', '2026-11-19T10:00:00Z'),
          await capture(apiKey, 'ada-2', 'ada', '2026-11-19T11:00:00Z'),
        ]
        const bob = await capture(apiKey, 'bob-1', 'bob', '2026-11-19T10:30:00Z')
        for (const id of [...ada, bob]) await analyze(chatbot.id, id)
        await projected()
        expect(await totals(chatbot.id)).toEqual({
          messages: 6,
          analyzed: 3,
          topics: 3,
          active: 3,
          conversations: 3,
        })
        // The conversation list's preview holds the end user's words, in clear like the messages.
        const previews = () =>
          db.pool
            .query('SELECT preview FROM rm_conversations WHERE chatbot_id = $1 ORDER BY preview', [
              chatbot.id,
            ])
            .then((r) => r.rows.map((row) => row.preview))
        expect(await previews()).toEqual([
          'private question of ada',
          'private question of ada',
          'private question of bob',
        ])

        const res = await app.inject({
          method: 'DELETE',
          url: `/api/v1/chatbots/${chatbot.id}/users/ada`,
          headers: { cookie },
        })
        expect(res.statusCode).toBe(200)
        expect(res.json()).toEqual({ ok: true, conversationsErased: 2 })
        await projected()
        expect(await traces(ada)).toEqual([])
        expect(await previews()).toEqual(['private question of bob'])
        expect(await totals(chatbot.id)).toEqual({
          messages: 2,
          analyzed: 1,
          topics: 1,
          active: 1,
          conversations: 1,
        })
        const read = await app.inject({
          method: 'GET',
          url: `/api/v1/conversations/${bob}`,
          headers: { cookie },
        })
        expect(read.statusCode).toBe(200)
        // An erased conversation is simply not found (not a 503 after waiting for a projection that never comes).
        const gone = await app.inject({
          method: 'GET',
          url: `/api/v1/conversations/${ada[0]}`,
          headers: { cookie },
        })
        expect(gone.statusCode).toBe(404)

        const live = await readModels()
        await rebuildReadModels({
          pool: db.pool,
          keyring: testKeyring,
          eventLog: pipeline.eventLog,
          progressIntervalMs: 20,
        })
        expect(await readModels()).toEqual(live)
        expect(await traces(ada)).toEqual([])

        // The same conversationId captured again is a new conversation.
        const again = await capture(apiKey, 'ada-1', 'ada', '2026-11-20T10:00:00Z')
        expect(ada).not.toContain(again)
      })

      it("answers 404 for another organization's chatbot, erasing nothing", async () => {
        const { chatbot, apiKey } = await createChatbot(app, cookie)
        await capture(apiKey, 'c', 'ada', '2026-11-19T10:00:00Z')
        const other = await signUp(app)
        const res = await app.inject({
          method: 'DELETE',
          url: `/api/v1/chatbots/${chatbot.id}/users/ada`,
          headers: { cookie: other.cookie },
        })
        expect(res.statusCode).toBe(404)
        const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM capture_conversations')
        expect(rows[0].n).toBe(1)
      })
    })

    describe('retention (settings.retentionDays)', () => {
      it('erases conversations whose last message is older, adjusting the rollups, on a controllable clock', async () => {
        const { chatbot, apiKey } = await createChatbot(app, cookie, {
          name: 'short memory',
          settings: { retentionDays: 7 },
        })
        const { apiKey: keepKey, chatbot: keeper } = await createChatbot(app, cookie, {
          name: 'no retention',
        })
        const old = await capture(apiKey, 'old', 'ada', '2026-11-05T10:00:00Z')
        const recent = await capture(apiKey, 'recent', 'bob', '2026-11-18T10:00:00Z')
        const unlimited = await capture(keepKey, 'ancient', 'cy', '2025-01-01T10:00:00Z')
        await projected()

        expect(await sweepRetention(db.pool, () => clock)).toBe(1)
        await projected()
        expect(await traces([old])).toEqual([])
        expect(await totals(chatbot.id)).toMatchObject({ messages: 2, active: 1, conversations: 1 })
        expect(await totals(keeper.id)).toMatchObject({ messages: 2, conversations: 1 })
        const { rows } = await db.pool.query('SELECT id FROM rm_conversations ORDER BY id')
        expect(rows.map((r) => r.id).sort()).toEqual([recent, unlimited].sort())

        // A week later the recent one is past the retention period too.
        clock = new Date('2026-11-26T12:00:00Z')
        expect(await sweepRetention(db.pool, () => clock)).toBe(1)
        expect(await sweepRetention(db.pool, () => clock)).toBe(0)
      })
    })
  })
}
