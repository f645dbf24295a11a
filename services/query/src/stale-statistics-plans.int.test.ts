/**
 * Regression (bench/FINDINGS.md, "Reads of a new organization on stale statistics"): on statistics
 * gathered before an organization's first conversations, the Topics page looked each of its
 * conversations up through rm_conversations_end_user (org_id, end_user_id), led there by row-level
 * security's org_id condition, and read all the organization's rows for each one (913 × 912 rows, 275 ms,
 * after CLINC150's burst); the signals read did the same through rm_conversation_signals_signal with no
 * statistics. Plans are the behaviour here: whatever the statistics (none, stale, fresh), each read scans
 * rm_conversations and rm_conversation_signals once, reading at most the organization's rows, and answers
 * the same.
 */
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { scanLoops } from '../../../test/support/plan-rows.ts'
import type { RollupScope } from './repositories/analytics.ts'
import { readSignals } from './repositories/signals.ts'
import { readTopics } from './repositories/topics.ts'

const NOW = new Date('2026-11-20T12:00:00Z')
const FROM = new Date(NOW.getTime() - 30 * 86_400_000)
const TABLES = ['rm_conversations', 'rm_hourly_activity', 'rm_conversation_signals', 'rm_topics', 'rm_themes']
const first = { org: randomUUID(), bot: randomUUID(), conversations: 1_500 }
const second = { org: randomUUID(), bot: randomUUID(), conversations: 400 }
/** The rest of a running service's organizations: what a scan of a whole table would read besides. */
const others = { org: randomUUID(), bot: randomUUID(), conversations: 12_000 }
let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
  // Statistics only where the test gathers them: autovacuum's ANALYZE would otherwise come when it will.
  for (const t of TABLES) await db.pool.query(`ALTER TABLE ${t} SET (autovacuum_enabled = false)`)
})
afterAll(async () => {
  await db?.drop()
})

/**
 * An organization's chatbot with `conversations` conversations over the 30 days before NOW, each active in
 * one hour (its activity row), in one or two of 12 topics (t-11 merged into t-1) or "other", many of one
 * end user each (rm_conversations_end_user holds their organization's rows together), a fifth with a bot
 * failure and a seventh escalated.
 */
async function seed(o: { org: string; bot: string; conversations: number }) {
  await db.pool.query(
    `INSERT INTO rm_topics (org_id, chatbot_id, id, label, keywords, configured, canonical_id, discovered_at,
                            updated_at, hidden)
     SELECT $1, $2::uuid, $2::uuid::text || '-t-' || k, 'topic ' || k, '{}', false,
            $2::uuid::text || CASE WHEN k = 11 THEN '-t-1' ELSE '-t-' || k END, $3, $3, false
       FROM generate_series(0, 11) k`,
    [o.org, o.bot, NOW],
  )
  await db.pool.query(
    `INSERT INTO rm_themes (org_id, chatbot_id, id, label, topic_ids, position, updated_at)
     VALUES ($1, $2::uuid, $2::uuid::text || '-theme', 'a theme', ARRAY[$2::uuid::text || '-t-2', $2::uuid::text || '-t-3'], 0, $3)`,
    [o.org, o.bot, NOW],
  )
  await db.pool.query(
    `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, end_user, message_count,
       first_message_at, last_message_at, created_at, updated_at, sentiment_score, sentiment_label, topics,
       stream_version)
     SELECT gen_random_uuid(), $1, $2::uuid, 'c-' || i, jsonb_build_object('id', 'user-' || (i % 7)), 2, at, at, at, at,
            0, 'neutral',
            CASE WHEN i % 9 = 0 THEN ARRAY['other']
                 WHEN i % 4 = 0 THEN ARRAY[$2::uuid::text || '-t-' || (i % 12), $2::uuid::text || '-t-' || ((i + 5) % 12)]
                 ELSE ARRAY[$2::uuid::text || '-t-' || (i % 12)] END, 2
       FROM generate_series(1, $4::int) i,
            LATERAL (SELECT $3::timestamptz - make_interval(secs => 30 * 86400 * (i - 0.5) / $4::int) AS at) x`,
    [o.org, o.bot, NOW, o.conversations],
  )
  await db.pool.query(
    `INSERT INTO rm_hourly_activity (org_id, chatbot_id, hour, conversation_id, end_user_id)
     SELECT org_id, chatbot_id, date_trunc('hour', last_message_at), id, end_user_id
       FROM rm_conversations WHERE chatbot_id = $1`,
    [o.bot],
  )
  await db.pool.query(
    `INSERT INTO rm_conversation_signals (org_id, chatbot_id, conversation_id, signal, confidence, evidence,
                                          analyzer)
     SELECT org_id, chatbot_id, id, s.signal, 0.8, '{}', 'test'
       FROM rm_conversations
       CROSS JOIN (VALUES ('bot_failure', 5), ('escalation', 7)) s(signal, every)
      WHERE chatbot_id = $1 AND substr(external_id, 3)::int % s.every = 0`,
    [o.bot],
  )
}

const analyze = () => db.pool.query(`ANALYZE ${TABLES.join(', ')}`)

/** Both reads of the organization as the query service runs them (its role, row-level security). */
async function read(orgId: string) {
  const client = await db.readerPool.connect()
  try {
    await client.query('BEGIN READ ONLY')
    await client.query("SELECT set_config('cas.org_id', $1, true)", [orgId])
    const scope: RollupScope = { orgId, from: FROM, to: NOW }
    const statements: { text: string; values: unknown[] }[] = []
    const recording = {
      query: (text: string, values: unknown[]) => {
        statements.push({ text, values })
        return client.query(text, values)
      },
    } as unknown as pg.ClientBase
    const topics = await readTopics(recording, scope, 'day', 'UTC', 20)
    const signals = await readSignals(recording, scope, 'day', 'UTC', 20)
    const topicsSql = statements.find((s) => /placed AS[\s\S]*rm_themes/.test(s.text))!
    const signalsSql = statements.find((s) => s.text.includes('rm_conversation_signals'))!
    return {
      answers: { topics, signals },
      plans: {
        topics: await scanLoops(client, topicsSql.text, topicsSql.values),
        signals: await scanLoops(client, signalsSql.text, signalsSql.values),
      },
    }
  } finally {
    await client.query('ROLLBACK')
    client.release()
  }
}

/** Each scan of these tables ran once and read at most the organization's rows of it. */
async function expectOnePassEach(
  plans: Awaited<ReturnType<typeof read>>['plans'],
  orgId: string,
  when: string,
) {
  const { rows } = await db.pool.query<{ table: string; n: number }>(
    `SELECT 'rm_conversations' AS table, count(*)::int AS n FROM rm_conversations WHERE org_id = $1
     UNION ALL SELECT 'rm_hourly_activity', count(*)::int FROM rm_hourly_activity WHERE org_id = $1
     UNION ALL SELECT 'rm_conversation_signals', count(*)::int FROM rm_conversation_signals WHERE org_id = $1`,
    [orgId],
  )
  const orgRows = new Map(rows.map((r) => [r.table, r.n]))
  for (const [read, scans] of Object.entries(plans)) {
    const looked = scans.filter((s) => orgRows.has(s.table))
    expect(
      looked.map((s) => s.table),
      `${read}, ${when}`,
    ).toContain('rm_conversations')
    for (const scan of looked) {
      const what = `${read}, ${when}: ${scan.type} of ${scan.table} ${scan.index ?? ''}`
      expect(scan.loops, what).toBe(1)
      expect(scan.rows, what).toBeLessThanOrEqual(orgRows.get(scan.table)!)
    }
  }
}

it('reads a new organization’s topics and signals in one pass of each table, on no, stale and fresh statistics, with the same answers', async () => {
  // No statistics: the first organization's first conversations.
  await seed(first)
  const none = await read(first.org)
  await expectOnePassEach(none.plans, first.org, 'no statistics')
  expect(none.answers.topics.conversationsWithTopics).toBe(first.conversations)
  expect(none.answers.signals.needsAttention.length).toBeGreaterThan(0)
  // Stale: the second organization's burst after the first one's ANALYZE; its rows are estimated at one.
  await analyze()
  await seed(second)
  const stale = await read(second.org)
  await expectOnePassEach(stale.plans, second.org, 'stale statistics')
  expect(stale.answers.topics.conversationsWithTopics).toBe(second.conversations)
  expect(stale.answers.topics.themes).toHaveLength(1)
  // Fresh: the same reads once the organizations are in the statistics answer the same. On tables of only
  // the two, a whole scan of rm_conversation_signals (651 rows) cost about as much as its index, and a
  // busy machine's plan took it once; beside the other organizations, the index is the cheaper by far.
  await seed(others)
  await analyze()
  const fresh = await read(second.org)
  await expectOnePassEach(fresh.plans, second.org, 'fresh statistics')
  expect(fresh.answers).toEqual(stale.answers)
  expect((await read(first.org)).answers).toEqual(none.answers)
})
