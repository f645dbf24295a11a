/**
 * The analysis commit's lookups read the rows of the batch's messages and conversations, not the table,
 * whatever the table's statistics say; the claim reads the jobs it claims, not the queue.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { blocksRead, rowsRead, scansOf } from '../../../test/support/plan-rows.ts'
import { CONVERSATIONS_RESULTS } from './job-runner.ts'
import {
  CLAIM_JOBS,
  CLAIM_PLAN,
  claimJobs,
  completeJobs,
  DELETE_CHATBOT_JOBS,
  DELETE_CONVERSATION_JOBS,
  enqueueJobs,
  forgetConversation,
  hasPendingJobs,
  JOB_COUNTS,
  jobCounts,
} from './jobs.ts'
import { TRANSCRIPT_JOBS } from './signals/llm-refine.ts'
import { PLACED_EARLIER } from './topics/placement.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

it('finds the topics given before by reading the batch’s messages only, however many results there are', async () => {
  await db.pool.query(
    `INSERT INTO analysis_results
     SELECT gen_random_uuid(), 'm-' || i, gen_random_uuid(), gen_random_uuid(), 'user', 0.5, 'neutral',
            CASE WHEN i % 4 = 0 THEN '{}'::text[] ELSE ARRAY['topic-' || (i % 7), 'other'] END, 'test', now()
       FROM generate_series(1, 100000) i`,
  )
  await db.pool.query('ANALYZE analysis_results')
  // 600 messages analysed before (a quarter or so without a topic), 1,400 new ones.
  const before = (
    await db.pool.query<{ conversation_id: string; message_id: string; topics: string[] }>(
      'SELECT conversation_id, message_id, topics FROM analysis_results ORDER BY message_id LIMIT 600',
    )
  ).rows
  const asked = [
    ...before.map((r) => ({ conversationId: r.conversation_id, messageId: r.message_id })),
    ...Array.from({ length: 1400 }, (_, i) => ({ conversationId: randomUUID(), messageId: `m-${i}` })),
  ]
  const params = [asked.map((p) => p.conversationId), asked.map((p) => p.messageId)]
  const { rows } = await db.pool.query<{ conversation_id: string; message_id: string; topic: string }>(
    PLACED_EARLIER,
    params,
  )
  const withTopic = before.filter((r) => r.topics.length > 0)
  expect(withTopic.length).toBeGreaterThan(300)
  expect(withTopic.length).toBeLessThan(600)
  expect(new Map(rows.map((r) => [`${r.conversation_id}|${r.message_id}`, r.topic]))).toEqual(
    new Map(withTopic.map((r) => [`${r.conversation_id}|${r.message_id}`, r.topics[0]])),
  )
  expect(await rowsRead(db.pool, 'analysis_results', PLACED_EARLIER, params)).toBeLessThanOrEqual(
    asked.length,
  )
  // The control, which shows what the lookup avoids: joined plainly, the planner reads the table.
  const plainJoin = `SELECT r.conversation_id, r.message_id, r.topics[1] AS topic FROM analysis_results r
       JOIN unnest($1::uuid[], $2::text[]) AS p(conversation_id, message_id)
         ON r.conversation_id = p.conversation_id AND r.message_id = p.message_id
      WHERE cardinality(r.topics) > 0`
  expect(await rowsRead(db.pool, 'analysis_results', plainJoin, params)).toBeGreaterThanOrEqual(75000)
})

it('reads the results of the conversations asked for, even with statistics taken when the table was small', async () => {
  await db.pool.query('TRUNCATE analysis_results')
  await db.pool.query('ALTER TABLE analysis_results SET (autovacuum_enabled = false)')
  const insert = (conversations: number) =>
    db.pool.query(
      `INSERT INTO analysis_results (conversation_id, message_id, org_id, chatbot_id, role, score, label, topics,
         topic_labels, analyzer, analyzed_at)
       SELECT c, 'm-' || i, gen_random_uuid(), gen_random_uuid(), 'user', 0.5, 'neutral', ARRAY['t'], ARRAY['T'],
              'test', now()
         FROM (SELECT gen_random_uuid() AS c FROM generate_series(1, $1::int)) cs, generate_series(1, 20) i
       RETURNING conversation_id`,
      [conversations],
    )
  // Analysed while the table held 50 conversations: each is then one of its most common values.
  const early = [...new Set((await insert(50)).rows.map((r) => r.conversation_id as string))]
  await db.pool.query('ANALYZE analysis_results')
  await insert(10000)
  const asked = [...early.slice(0, 40), randomUUID()]
  const { rows } = await db.pool.query(CONVERSATIONS_RESULTS, [asked])
  expect(rows).toHaveLength(800)
  expect(new Set(rows.map((r) => r.conversation_id))).toEqual(new Set(early.slice(0, 40)))
  expect(rows[0]).toMatchObject({ role: 'user', score: 0.5, topics: ['t'], topic_labels: ['T'] })
  // The 40 stored conversations alone: 20 rows a loop, exactly 800 on every server (before PostgreSQL 18,
  // EXPLAIN rounds each loop's rows to a whole number: with the unknown one's loop, 800/41 read as 20 a loop).
  expect(await rowsRead(db.pool, 'analysis_results', CONVERSATIONS_RESULTS, [early.slice(0, 40)])).toBe(800)
  // The control, which shows what the lookup avoids: with `= ANY`, the planner scans the table.
  const anyOf = `SELECT conversation_id, role, score, topics, topic_labels FROM analysis_results
    WHERE conversation_id = ANY($1::uuid[])`
  expect(await rowsRead(db.pool, 'analysis_results', anyOf, [asked])).toBeGreaterThanOrEqual(200000)
})

// Regression: a claim sorted every waiting job of a re-analysis (one next_attempt_at for all) by id, and
// joined the ids taken to a scan of the table: 9,000 rows read for 48 jobs with 4,500 queued.
it('claims the due jobs in order by reading the jobs it claims, however many wait', async () => {
  const chatbotId = randomUUID()
  const orgId = randomUUID()
  const queued = new Date(Date.now() - 60_000)
  const jobs = Array.from({ length: 4500 }, (_, i) => ({
    sourceEventId: randomUUID(),
    conversationId: randomUUID(),
    orgId,
    chatbotId,
    messages: [{ id: `m-${i}`, role: 'user' as const, content: 'where is my parcel' }],
  }))
  // Queued first (the lowest id) but due later: claimed after all of them.
  const later = { ...jobs[0]!, sourceEventId: randomUUID(), conversationId: randomUUID() }
  await enqueueJobs(db.pool, [later], new Date(Date.now() - 1000))
  await enqueueJobs(db.pool, jobs, queued)
  await db.pool.query('ANALYZE analysis_jobs')
  const ids = (
    await db.pool.query<{ id: string }>(
      'SELECT j.id::text FROM analysis_jobs j ORDER BY j.next_attempt_at, j.id',
    )
  ).rows.map((r) => r.id)
  const now = new Date()
  const lease = 60_000
  // Run under EXPLAIN ANALYZE, the first 48 are claimed: each read three times (the index in order, its
  // primary-key probe, its update), no other job.
  expect(await rowsRead(db.pool, 'analysis_jobs', CLAIM_JOBS, [48, now, lease])).toBe(3 * 48)
  const claim = async (n: number) => new Set((await claimJobs(db.pool, n, 60_000, now)).map((j) => j.id))
  expect(await claim(48)).toEqual(new Set(ids.slice(48, 96)))
  // The 96 running ones are not in the queue's index (migration 0054): not read.
  expect(await rowsRead(db.pool, 'analysis_jobs', CLAIM_JOBS, [48, now, lease])).toBe(3 * 48)
  expect(await claim(4500 - 144)).toEqual(new Set(ids.slice(144, 4500)))
  expect(ids[4500]).toBe(
    (
      await db.pool.query('SELECT id::text FROM analysis_jobs WHERE conversation_id = $1', [
        later.conversationId,
      ])
    ).rows[0].id,
  )
  expect(await claim(10)).toEqual(new Set([ids[4500]]))
})

// Regression: the claim's check for an earlier open job of the same conversation, planned as an anti join
// with statistics taken while no job waited (an idle service, every job done), read all the waiting jobs
// for each waiting job: 20 million rows, 9 s, for one claim of a 4,500-job re-analysis.
it('claims in conversation order reading the waiting jobs at most once, with statistics taken while none waited', async () => {
  await db.pool.query('TRUNCATE analysis_jobs CASCADE')
  await db.pool.query('ALTER TABLE analysis_jobs SET (autovacuum_enabled = false)')
  const orgId = randomUUID()
  const chatbotId = randomUUID()
  const job = (conversationId: string, i: number) => ({
    sourceEventId: randomUUID(),
    conversationId,
    orgId,
    chatbotId,
    messages: [{ id: `m-${i}`, role: 'user' as const, content: 'where is my parcel' }],
  })
  const queued = new Date(Date.now() - 60_000)
  await enqueueJobs(
    db.pool,
    Array.from({ length: 300 }, (_, i) => job(randomUUID(), i)),
    queued,
  )
  await db.pool.query("UPDATE analysis_jobs SET status = 'done'")
  await db.pool.query('ANALYZE analysis_jobs')
  // Then a burst: 3,000 conversations, the first of them with a second job queued after its first.
  const conversations = Array.from({ length: 3000 }, () => randomUUID())
  await enqueueJobs(
    db.pool,
    conversations.map((c, i) => job(c, i)),
    queued,
  )
  await enqueueJobs(db.pool, [job(conversations[0]!, 3000)], queued)
  const now = new Date()
  const lease = 60_000
  // Only the queue's index serves the due jobs (migration 0054's predicate, `(status = 'pending') IS TRUE`,
  // implies no other index's): read in order, each of the 48 three times, whatever the statistics. Before,
  // the planner sorted every waiting job read on analysis_jobs_waiting_since (~2 per waiting job).
  expect(await rowsRead(db.pool, 'analysis_jobs', CLAIM_JOBS, [48, now, lease])).toBe(3 * 48)
  // The control, which shows what the probe avoids: the same claim with the check as a join on the
  // waiting jobs' predicate.
  const asJoin = CLAIM_JOBS.replace(
    "AND e.status NOT IN ('done', 'dead') OFFSET 0)",
    "AND e.status IN ('pending', 'running'))",
  )
  expect(asJoin).not.toBe(CLAIM_JOBS)
  // (With the queue read in order since 0054, the join reads every waiting job for each of the 48 it
  // claims, not for every waiting job.)
  expect(await rowsRead(db.pool, 'analysis_jobs', asJoin, [48, now, lease])).toBeGreaterThan(48 * 2000)
  // Each run under EXPLAIN ANALYZE claimed 48. Every conversation's first job is claimed, not the second
  // job of the first conversation while its first is running.
  expect(await claimJobs(db.pool, 4000, 60_000, now)).toHaveLength(3000 - 2 * 48)
  const { rows } = await db.pool.query<{ status: string; n: number; message: string }>(
    `SELECT status, count(*)::int AS n, min(messages->0->>'id') AS message FROM analysis_jobs
      WHERE status <> 'done' GROUP BY status ORDER BY status`,
  )
  expect(rows).toEqual([
    { status: 'pending', n: 1, message: 'm-3000' },
    { status: 'running', n: 3000, message: expect.any(String) },
  ])
})

// Regression (issue 31, perf9): the queue's index held the running jobs too, and a running job keeps the
// next_attempt_at it was claimed at, so every claim read every job in flight, and its row, before the first
// it could take: ~1,190 shared blocks a claim in DSTC11's window.
it('claims reading neither the jobs in flight nor the finished ones, and a lapsed lease in its order', async () => {
  await db.pool.query('TRUNCATE analysis_jobs CASCADE')
  await db.pool.query('ALTER TABLE analysis_jobs SET (autovacuum_enabled = false)')
  const orgId = randomUUID()
  const chatbotId = randomUUID()
  const job = (i: number) => ({
    sourceEventId: randomUUID(),
    conversationId: randomUUID(),
    orgId,
    chatbotId,
    messages: [{ id: `m-${i}`, role: 'user' as const, content: 'where is my parcel, it has not come' }],
  })
  // A re-analysis of 2,000 jobs done (statistics then taken, as autovacuum did between bench:quality's
  // sets: no job waiting), then another of 600, one next_attempt_at for all, 128 of them in flight.
  const queued = new Date(Date.now() - 60_000)
  await enqueueJobs(
    db.pool,
    Array.from({ length: 2000 }, (_, i) => job(i)),
    queued,
  )
  for (let done = 0; done < 2000; done += 80) {
    const claimed = await claimJobs(db.pool, 80, 60_000, new Date())
    await completeJobs(
      db.pool,
      claimed.map((j) => j.id),
      new Date(),
    )
  }
  await db.pool.query('ANALYZE analysis_jobs')
  await enqueueJobs(
    db.pool,
    Array.from({ length: 600 }, (_, i) => job(2000 + i)),
    queued,
  )
  const ids = (
    await db.pool.query<{ id: string }>(
      'SELECT j.id::text FROM analysis_jobs j ORDER BY j.next_attempt_at, j.id',
    )
  ).rows.map((r) => r.id)
  await claimJobs(db.pool, 128, 60_000, new Date())
  // One of the first in flight lost its worker (its lease ran out): claimed first, in its order.
  const lapse = (id: string) =>
    db.pool.query("UPDATE analysis_jobs SET lease_until = now() - interval '1 second' WHERE id = $1", [id])
  await lapse(ids[2010]!)
  const now = new Date()
  const lease = 60_000
  const first = await claimJobs(db.pool, 16, lease, now)
  expect(new Set(first.map((j) => j.id))).toEqual(new Set([ids[2010]!, ...ids.slice(2128, 2143)]))
  expect(first.find((j) => j.id === ids[2010])?.attempts).toBe(2)
  // Another lapsed and 15 due: each read three times (its index, its primary-key probe, its update), and
  // the 16th due job read in the queue's index and left; no job in flight, none done. Before: the 600
  // waiting, running and due, 1,281 rows.
  await lapse(ids[2011]!)
  expect(await rowsRead(db.pool, 'analysis_jobs', CLAIM_JOBS, [16, now, lease])).toBe(3 * 16 + 1)
  const { read, claimed } = await blocksRead(db.pool, CLAIM_JOBS, [16, now, lease])
  expect(claimed).toBe(16)
  // Before: 1,207 (every waiting job read on analysis_jobs_waiting_since and probed, then sorted), as in
  // DSTC11's window (~1,190 a claim).
  expect(read).toBeLessThan(30 * 16)
  const next = await claimJobs(db.pool, 16, lease, now)
  expect(new Set(next.map((j) => j.id))).toEqual(new Set(ids.slice(2174, 2190)))
})

// Regression (perf9): on a table never analysed (a new database's first re-analysis) the planner estimated
// one waiting job and took a bitmap scan of the queue's index and a sort: every waiting job read and probed
// for each claim. claimJobs plans the claim with CLAIM_PLAN.
it('claims in order on a table never analysed', async () => {
  const fresh = await createTestDatabase()
  try {
    await fresh.pool.query('ALTER TABLE analysis_jobs SET (autovacuum_enabled = false)')
    const orgId = randomUUID()
    const chatbotId = randomUUID()
    await enqueueJobs(
      fresh.pool,
      Array.from({ length: 1500 }, (_, i) => ({
        sourceEventId: randomUUID(),
        conversationId: randomUUID(),
        orgId,
        chatbotId,
        messages: [{ id: `m-${i}`, role: 'user' as const, content: 'where is my parcel' }],
      })),
      new Date(Date.now() - 60_000),
    )
    expect(await claimJobs(fresh.pool, 128, 60_000, new Date())).toHaveLength(128)
    const blocks = async (plan: boolean) => {
      const client = await fresh.pool.connect()
      try {
        await client.query('BEGIN')
        if (plan) await client.query(CLAIM_PLAN)
        return await blocksRead(client, CLAIM_JOBS, [16, new Date(), 60_000])
      } finally {
        await client.query('ROLLBACK')
        client.release()
      }
    }
    const claimed = await blocks(true)
    expect(claimed.claimed).toBe(16)
    expect(claimed.read).toBeLessThan(30 * 16)
    // The control: without it, the 1,372 waiting jobs read, probed and sorted (~3,000 blocks).
    expect((await blocks(false)).read).toBeGreaterThan(1372)
  } finally {
    await fresh.drop()
  }
})

// Migration 0056 dropped the index on requested_at of the open jobs (one entry fewer for every claim to
// write): the queue's counts read the open jobs on the index that holds them, whatever the statistics.
it('counts the open jobs and finds the oldest reading only them, with statistics taken while none waited', async () => {
  await db.pool.query('TRUNCATE analysis_jobs CASCADE')
  await db.pool.query('ALTER TABLE analysis_jobs SET (autovacuum_enabled = false)')
  const orgId = randomUUID()
  const chatbotId = randomUUID()
  const job = (i: number, requestedAt?: Date) => ({
    sourceEventId: randomUUID(),
    conversationId: randomUUID(),
    orgId,
    chatbotId,
    messages: [{ id: `m-${i}`, role: 'user' as const, content: 'where is my parcel' }],
    ...(requestedAt ? { requestedAt } : {}),
  })
  await enqueueJobs(
    db.pool,
    Array.from({ length: 2000 }, (_, i) => job(i)),
    new Date(Date.now() - 120_000),
  )
  await db.pool.query("UPDATE analysis_jobs SET status = 'done'")
  await db.pool.query('ANALYZE analysis_jobs')
  expect(await jobCounts(db.pool)).toEqual({ waiting: 0, dead: 0, oldestWaitingSince: null })
  expect(await hasPendingJobs(db.pool, 1)).toBe(false)
  // 300 queued (the oldest owed since a re-analysis asked for it earlier), 40 of them then claimed.
  const asked = new Date('2026-11-30T10:00:00.000Z')
  await enqueueJobs(
    db.pool,
    Array.from({ length: 300 }, (_, i) => job(2000 + i, i === 150 ? asked : undefined)),
    new Date(Date.now() - 60_000),
  )
  await claimJobs(db.pool, 40, 60_000, new Date())
  expect(await jobCounts(db.pool)).toEqual({ waiting: 300, dead: 0, oldestWaitingSince: asked })
  expect(await hasPendingJobs(db.pool, 300)).toBe(true)
  expect(await hasPendingJobs(db.pool, 301)).toBe(false)
  expect(await scansOf(db.pool, 'analysis_jobs', JOB_COUNTS, [])).toEqual([
    expect.objectContaining({ index: 'analysis_jobs_conversation_open' }),
  ])
  // The 300 open jobs, not the 2,000 done.
  expect(await rowsRead(db.pool, 'analysis_jobs', JOB_COUNTS, [])).toBeLessThanOrEqual(300)
})

// Regression: erasing a conversation (an end user's erasure, a retention sweep's) and the LLM refinement's
// transcript read analysis_jobs by conversation_id alone, which only the open jobs' index held: every job
// ever analysed was read, for each erased conversation.
it('erases a conversation’s jobs and reads its transcript’s by reading its own jobs, however many are done', async () => {
  await db.pool.query('TRUNCATE analysis_jobs CASCADE')
  const orgId = randomUUID()
  const [busy, other] = [randomUUID(), randomUUID()]
  // 5,000 conversations of 4 done jobs each, four in five of them the busy chatbot's.
  await db.pool.query(
    `INSERT INTO analysis_jobs (source_event_id, conversation_id, org_id, chatbot_id, messages, status,
       requested_at, next_attempt_at, created_at, updated_at)
     SELECT gen_random_uuid(), c.id, $1, CASE WHEN c.n % 5 = 0 THEN $3::uuid ELSE $2::uuid END,
            jsonb_build_array(jsonb_build_object('id', 'm-' || c.n || '-' || k, 'role', 'user',
                                                 'content', 'turn ' || k || ' of ' || c.n)),
            'done', now(), now(), now(), now()
       FROM (SELECT gen_random_uuid() AS id, n FROM generate_series(1, 5000) n) c, generate_series(1, 4) k`,
    [orgId, busy, other],
  )
  await db.pool.query('ANALYZE analysis_jobs')
  const conversationOf = async (chatbotId: string) =>
    (
      await db.pool.query<{ conversation_id: string }>(
        'SELECT conversation_id FROM analysis_jobs WHERE chatbot_id = $1 LIMIT 1',
        [chatbotId],
      )
    ).rows[0]!.conversation_id
  const [erased, kept] = [await conversationOf(busy), await conversationOf(other)]
  // One more capture of the erased conversation, still queued.
  await enqueueJobs(
    db.pool,
    [
      {
        sourceEventId: randomUUID(),
        conversationId: erased,
        orgId,
        chatbotId: busy,
        messages: [{ id: 'm-late', role: 'user', content: 'one more thing' }],
      },
    ],
    new Date(),
  )
  const { rows: transcript } = await db.pool.query<{ messages: { content: string }[] }>(TRANSCRIPT_JOBS, [
    busy,
    erased,
  ])
  expect(transcript.map((r) => r.messages[0]!.content)).toEqual(
    expect.arrayContaining([expect.stringMatching(/^turn \d of \d+$/)]),
  )
  expect(transcript).toHaveLength(4)
  for (const statement of [TRANSCRIPT_JOBS, DELETE_CONVERSATION_JOBS, DELETE_CHATBOT_JOBS]) {
    const params = statement === DELETE_CHATBOT_JOBS ? [other] : [busy, erased]
    expect(await scansOf(db.pool, 'analysis_jobs', statement, params)).toContainEqual(
      expect.objectContaining({ index: 'analysis_jobs_chatbot_conversation' }),
    )
  }
  expect(await rowsRead(db.pool, 'analysis_jobs', TRANSCRIPT_JOBS, [busy, erased])).toBeLessThanOrEqual(5)

  // The deletion, run by EXPLAIN ANALYZE: its 5 jobs read (locked, then deleted by primary key).
  expect(
    await rowsRead(db.pool, 'analysis_jobs', DELETE_CONVERSATION_JOBS, [busy, erased]),
  ).toBeLessThanOrEqual(15)
  const client = await db.pool.connect()
  try {
    await forgetConversation(client, other, kept)
  } finally {
    client.release()
  }
  const { rows: left } = await db.pool.query<{ conversation_id: string; jobs: number }>(
    `SELECT conversation_id, count(*)::int AS jobs FROM analysis_jobs
      WHERE conversation_id = ANY($1::uuid[]) GROUP BY 1`,
    [[erased, kept]],
  )
  expect(left).toEqual([])
  expect((await db.pool.query('SELECT count(*)::int AS n FROM analysis_jobs')).rows[0].n).toBe(20001 - 5 - 4)
})
