/**
 * Permanent deletion by crypto-shredding, in both modes: personal data is sealed in every stored and
 * published event; deleting a chatbot destroys its data key and purges its journal rows, so that a full
 * replay (from Kafka's earliest offset, or the journal) leaves no trace of its content in any table, and
 * raw reads of the topics never show plaintext. A log holding both v1 (in clear) and v2 (sealed) events
 * replays to the same read models.
 */
import { randomBytes } from 'node:crypto'
import { loadConfig } from '@cas/config'
import { withTransaction } from '@cas/db'
import { appendToStream, decodeRecord, type JournalRecord } from '@cas/eventlog'
import { openRecords } from '@cas/keyring'
import { createAnalysisService, createAnalyzer } from '@cas/service-analysis'
import { READ_MODEL_TABLES, rebuildReadModels } from '@cas/service-projector/rebuild'
import { afterEach, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import type { TestDatabase } from './support/database.ts'
import { readTopicsRaw, uniqueGroupId } from './support/kafka.ts'
import { testKeyring } from './support/keyring.ts'
import { modelConfigEnv } from './support/model.ts'
import {
  consumerCaughtUp,
  EVENT_LOG_MODES,
  startLiveProjector,
  startPipeline,
  type TestPipeline,
} from './support/pipeline.ts'
import { waitFor } from './support/wait.ts'

/** Strings that appear only in what one chatbot was sent: its content, end user, custom data. */
function markers(label: string) {
  const tag = `${label}${randomBytes(4).toString('hex')}`
  return {
    conversationId: `conversation-${tag}`,
    content: `my secret is ${tag}-content`,
    email: `${tag}@example.com`,
    custom: `${tag}-custom`,
    page: `https://example.com/${tag}-page`,
  }
}

type Markers = ReturnType<typeof markers>

/** Where a deleted chatbot's id may remain: what keeps it deleted, and no content. */
const TOMBSTONE_TABLES = [
  'public.rm_deleted_chatbots',
  'public.chatbot_data_keys',
  'public.event_journal',
  'public.event_streams',
  'public.consumer_stream_versions',
  // Who created, changed and deleted it, and when (its settings are scrubbed from it on deletion).
  'public.audit_log',
]

function captureOf(m: Markers) {
  return {
    conversationId: m.conversationId,
    messages: [
      { id: 'q', role: 'user', content: m.content, sentAt: new Date(Date.now() - 60_000).toISOString() },
      { id: 'a', role: 'assistant', content: 'Sorry to hear that, a refund is on its way.' },
    ],
    user: { id: `user-of-${m.conversationId}`, email: m.email },
    session: { pageUrl: m.page },
    custom: { note: m.custom },
  }
}

/** How many rows of any table, in any schema, mention `needle` anywhere. */
async function rowsMentioning(db: TestDatabase, needle: string): Promise<Record<string, number>> {
  const { rows: tables } = await db.pool.query<{ schemaname: string; tablename: string }>(
    `SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
  )
  const found: Record<string, number> = {}
  for (const { schemaname, tablename } of tables) {
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${schemaname}"."${tablename}" t WHERE t::text LIKE '%' || $1 || '%'`,
      [needle],
    )
    if (rows[0]!.n > 0) found[`${schemaname}.${tablename}`] = rows[0]!.n
  }
  return found
}

async function readModelSnapshot(db: TestDatabase) {
  const tables: Record<string, string[]> = {}
  for (const table of READ_MODEL_TABLES) {
    const { rows } = await db.pool.query<{ row: string }>(`SELECT to_jsonb(t)::text AS row FROM ${table} t`)
    tables[table] = rows.map((r) => r.row).sort()
  }
  return tables
}

async function startConsumers(pipeline: TestPipeline, cleanups: (() => Promise<unknown>)[]) {
  const { db, eventLog } = pipeline
  const { groupId: projectorGroup } = await startLiveProjector(pipeline, cleanups)
  const analysisGroup = uniqueGroupId('analysis')
  const analysis = createAnalysisService({
    pool: db.pool,
    keyring: testKeyring,
    eventLog,
    analyzer: await createAnalyzer(loadConfig({ DATABASE_URL: db.url, ...modelConfigEnv() })),
    logger: false,
    groupId: analysisGroup,
  })
  await analysis.start()
  cleanups.push(() => analysis.stop())
  return {
    projectorGroup,
    caughtUp: async () =>
      (await consumerCaughtUp(pipeline, projectorGroup)) &&
      (await consumerCaughtUp(pipeline, analysisGroup, ['conversation', 'chatbot'])),
  }
}

for (const mode of EVENT_LOG_MODES) {
  describe.skipIf(!mode.available)(`crypto-shredding, ${mode.name} mode`, () => {
    const cleanups: (() => Promise<unknown>)[] = []
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
    })

    it('leaves no trace of a deleted chatbot in any table after a full replay, and no plaintext in the log', async () => {
      const pipeline = await startPipeline(mode.name, cleanups)
      const { db, app, eventLog } = pipeline
      const { projectorGroup, caughtUp } = await startConsumers(pipeline, cleanups)
      const { cookie } = await signUp(app)
      const doomed = await createChatbot(app, cookie, { name: 'Doomed' })
      const kept = await createChatbot(app, cookie, { name: 'Kept' })
      const gone = markers('gone')
      const stays = markers('stays')
      for (const [bot, m] of [
        [doomed, gone],
        [kept, stays],
      ] as const) {
        const res = await postCapture(app, bot.apiKey, captureOf(m))
        expect(res.statusCode).toBe(200)
        const id = res.json().conversationId
        // Projected and analysed: the content has reached the read models and the analysis tables.
        await waitFor(
          async () => {
            const read = await app.inject({
              method: 'GET',
              url: `/api/v1/conversations/${id}`,
              headers: { cookie },
            })
            return read.statusCode === 200 && read.json().conversation.sentiment
          },
          { what: `the ${m.conversationId} conversation to be analysed` },
        )
      }
      await waitFor(caughtUp, { what: 'the consumers to catch up' })
      for (const needle of Object.values(gone)) expect(await rowsMentioning(db, needle)).not.toEqual({})

      // What is stored and published holds no personal data in clear, whichever chatbot it belongs to.
      const { rows: stored } = await db.pool.query<{ payload: unknown }>('SELECT payload FROM event_journal')
      const journalText = JSON.stringify(stored)
      for (const needle of [...Object.values(gone), ...Object.values(stays)]) {
        expect(journalText).not.toContain(needle)
      }
      let published: { topic: string; key: string; value: string }[] = []
      if (eventLog.kind === 'kafka') {
        await waitFor(() => consumerCaughtUp(pipeline, projectorGroup), { what: 'the relay to publish' })
        published = await readTopicsRaw(eventLog.kafka, eventLog.topicPrefix ?? '')
        const doomedRecords = published.filter((m) => m.value.includes(doomed.chatbot.id))
        expect(doomedRecords.length).toBeGreaterThanOrEqual(3)
        expect(doomedRecords.some((m) => m.value.includes('"sealed"'))).toBe(true)
        const text = published.map((m) => m.value).join('\n')
        for (const needle of [...Object.values(gone), ...Object.values(stays)])
          expect(text).not.toContain(needle)
      }

      const deleted = await app.inject({
        method: 'DELETE',
        url: `/api/v1/chatbots/${doomed.chatbot.id}`,
        headers: { cookie },
      })
      expect(deleted.statusCode).toBe(200)
      const { rows: left } = await db.pool.query(
        'SELECT type FROM event_journal WHERE chatbot_id = $1 ORDER BY position',
        [doomed.chatbot.id],
      )
      expect(left).toEqual([{ type: 'chatbot.deleted' }])
      await waitFor(caughtUp, { what: 'the consumers to apply the deletion' })

      // Replay everything: Kafka from the earliest offset (its sealed copies are still there), or the journal.
      const result = await rebuildReadModels({ pool: db.pool, keyring: testKeyring, eventLog })
      expect(result.swapped).toBe(true)
      for (const needle of Object.values(gone)) expect(await rowsMentioning(db, needle), needle).toEqual({})
      // Its id survives only where it keeps the chatbot deleted: tombstones, its destroyed key, its
      // chatbot.deleted event and stream bookkeeping; never next to content.
      const byId = await rowsMentioning(db, doomed.chatbot.id)
      expect(Object.keys(byId).filter((table) => !TOMBSTONE_TABLES.includes(table))).toEqual([])
      // The kept chatbot is untouched: the scan does see content where it is.
      // (and in the conversation list's preview of its first end-user message, which goes with the row).
      expect(await rowsMentioning(db, stays.content)).toMatchObject({
        'public.rm_messages': 1,
        'public.rm_conversations': 1,
      })

      if (eventLog.kind === 'kafka') {
        // Its records are still in Kafka, sealed; with the key destroyed every reader skips them as deleted.
        const records: JournalRecord[] = published
          .map((m) => decodeRecord(m.topic, Buffer.from(m.value), eventLog.topicPrefix))
          .flatMap((d) => (d.ok && d.record.chatbotId === doomed.chatbot.id ? [d.record] : []))
        expect(records.length).toBeGreaterThan(0)
        const opened = await openRecords(db.pool, testKeyring, records)
        expect(opened.filter((o) => o.ok)).toEqual([])
        expect(new Set(opened.map((o) => (o.ok ? 'ok' : o.reason)))).toEqual(new Set(['key_destroyed']))
      }
    })

    it('replays a log holding v1 events in clear and v2 sealed events to the same read models', async () => {
      const pipeline = await startPipeline(mode.name, cleanups)
      const { db, app, eventLog } = pipeline
      const { projectorGroup } = await startConsumers(pipeline, cleanups)
      const { cookie, organization } = await signUp(app)
      const bot = await createChatbot(app, cookie, { name: 'Mixed' })
      const sentAt = '2026-11-20T10:00:00.000Z'
      const messages = [
        { id: 'q', role: 'user', content: 'I love this, thank you!', sentAt },
        { id: 'a', role: 'assistant', content: 'Glad to help.', sentAt },
      ] as const
      const metadata = {
        user: { id: 'u-1', plan: 'pro' },
        organization: {},
        session: {},
        custom: { tier: 2 },
      }
      // As the gateway wrote them before encryption: v1, in clear.
      const legacy = await withTransaction(db.pool, (client) =>
        appendToStream(client, {
          streamType: 'conversation',
          streamId: crypto.randomUUID(),
          orgId: organization.id,
          chatbotId: bot.chatbot.id,
          expectedVersion: 'no_stream',
          events: [
            { type: 'conversation.started', version: 1, payload: { conversationId: 'legacy', ...metadata } },
            {
              type: 'conversation.messages-captured',
              version: 1,
              payload: { messages, receivedAt: sentAt, analysisRequested: true },
            },
            {
              type: 'conversation.metadata-updated',
              version: 1,
              payload: { ...metadata, custom: { tier: 3 } },
            },
          ],
        }),
      )
      // The same conversation captured now: v2, sealed.
      const res = await postCapture(app, bot.apiKey, {
        conversationId: 'current',
        messages,
        user: metadata.user,
        custom: metadata.custom,
      })
      expect(res.statusCode).toBe(200)
      await postCapture(app, bot.apiKey, { conversationId: 'current', messages, custom: { tier: 3 } })
      const current = res.json().conversationId as string
      const legacyId = legacy.records[0]!.streamId
      const conversation = async (id: string) => {
        const read = await app.inject({
          method: 'GET',
          url: `/api/v1/conversations/${id}`,
          headers: { cookie },
        })
        return read.statusCode === 200 ? read.json().conversation : undefined
      }
      const analysed = async (id: string) => {
        const c = await conversation(id)
        return c?.sentiment && c.custom?.tier === 3 ? c : undefined
      }
      const [a, b] = [await waitFor(() => analysed(legacyId)), await waitFor(() => analysed(current))]
      const comparable = (c: Record<string, unknown>) => {
        const { id: _id, conversationId: _external, createdAt: _c, updatedAt: _u, ...rest } = c
        return rest
      }
      expect(comparable(a)).toEqual(comparable(b))
      expect(a.messages.map((m: { content: string }) => m.content)).toEqual(messages.map((m) => m.content))

      await waitFor(() => consumerCaughtUp(pipeline, projectorGroup), { what: 'the projector to catch up' })
      const before = await readModelSnapshot(db)
      const result = await rebuildReadModels({
        pool: db.pool,
        keyring: testKeyring,
        eventLog,
        liveGroupId: projectorGroup,
      })
      expect(result.swapped).toBe(true)
      expect(await readModelSnapshot(db)).toEqual(before)
    })
  })
}
