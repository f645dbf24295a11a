import { randomUUID } from 'node:crypto'
import { EMBEDDED_EVENT_LOG } from '@cas/eventlog'
import { destroyDataKey } from '@cas/keyring'
import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../../test/support/auth.ts'
import { createChatbot, postCapture } from '../../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'
import { journalEvents } from '../../../test/support/journal.ts'
import { testKeyring } from '../../../test/support/keyring.ts'
import { projectAll } from '../../../test/support/projector.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { ScriptedAnalyzer } from '../test/scripted-analyzer.ts'
import { type AnalysisService, createAnalysisService } from './app.ts'
import { rememberChatbotSettings } from './chatbot-settings.ts'
import { claimJobs, enqueueJobs } from './jobs.ts'

let db: TestDatabase
let app: FastifyInstance
let cookie: string
let apiKey: string
let service: AnalysisService | undefined
let analyzer: ScriptedAnalyzer

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db))
  cookie = (await signUp(app)).cookie
  apiKey = (await createChatbot(app, cookie)).apiKey
})
afterEach(async () => {
  analyzer?.release()
  await service?.stop()
  service = undefined
})
afterAll(async () => {
  await app.close()
  await db.drop()
})

async function startService(
  opts: {
    maxAttempts?: number
    maxPending?: number
    concurrency?: number
    jobPollIntervalMs?: number
    commitHoldMs?: number
  } = {},
) {
  analyzer = new ScriptedAnalyzer()
  service = createAnalysisService({
    pool: db.pool,
    keyring: testKeyring,
    eventLog: { ...EMBEDDED_EVENT_LOG, pollIntervalMs: 5 },
    analyzer,
    logger: false,
    retryBaseMs: 1,
    ...opts,
  })
  await service.start()
  return service
}

let n = 0
async function capture(contents: string[], key = apiKey) {
  const res = await postCapture(app, key, {
    conversationId: `conversation-${++n}`,
    messages: contents.map((content, i) => ({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', content })),
  })
  expect(res.statusCode).toBe(200)
  return res.json() as { conversationId: string; analysisQueued: boolean }
}

async function analysisEvents(conversationId: string) {
  return journalEvents(db.pool, 'analysis', conversationId)
}

async function job(conversationId: string) {
  const { rows } = await db.pool.query(
    'SELECT status, attempts FROM analysis_jobs WHERE conversation_id = $1',
    [conversationId],
  )
  return rows[0]
}

/** What the detector names these test texts is language.test.ts's and the test below's concern. */
const anyLanguage = expect.stringMatching(/^[a-z]{2,3}$/)

/** A key phrase of the analyzer's (not the language model's): its own id. */
const billing = { id: 'billing', label: 'billing' }

describe('analysis service', () => {
  it('analyzes every captured message and records the analyzer, and the read models show it', async () => {
    await startService()
    const { conversationId } = await capture([
      'so happy score:0.8 #billing',
      'glad to help score:0.4',
      'meh score:-0.2 #billing',
    ])
    const events = await waitFor(async () => {
      const found = await analysisEvents(conversationId)
      return found.length >= 2 && found
    })
    expect(events.map((e) => e.type)).toEqual([
      'analysis.messages-analyzed',
      'analysis.conversation-analyzed',
    ])
    expect(events[0]?.payload).toEqual({
      analyzer: { name: 'scripted', version: 'test-1' },
      results: [
        {
          messageId: 'm0',
          sentiment: { score: 0.8, label: 'positive' },
          topics: [billing],
          language: anyLanguage,
        },
        { messageId: 'm1', sentiment: { score: 0.4, label: 'positive' }, topics: [] },
        {
          messageId: 'm2',
          sentiment: { score: -0.2, label: 'negative' },
          topics: [billing],
          language: anyLanguage,
        },
      ],
      signalsDecided: true,
    })
    // The conversation's sentiment is the end user's (m0, m2): (0.8 - 0.2) / 2; the assistant's apart.
    expect(events[1]?.payload).toEqual({
      analyzer: { name: 'scripted', version: 'test-1' },
      sentiment: { score: 0.3, label: 'positive' },
      assistantSentiment: { score: 0.4, label: 'positive' },
      topics: [billing],
    })
    await projectAll(db.pool)
    const res = await app.inject({
      method: 'GET',
      url: `/api/v1/conversations/${conversationId}`,
      headers: { cookie },
    })
    const { conversation } = res.json()
    expect(conversation.sentiment).toEqual({ score: 0.3, label: 'positive' })
    expect(conversation.assistantSentiment).toEqual({ score: 0.4, label: 'positive' })
    expect(conversation.topics).toEqual(['billing'])
    expect(conversation.messages[0].sentiment).toEqual({ score: 0.8, label: 'positive' })
    expect(await job(conversationId)).toEqual({ status: 'done', attempts: 1 })
  })

  it("detects each end-user message's language (never the assistant's), and the read model keeps it", async () => {
    await startService()
    const { conversationId } = await capture([
      'Quiero cambiar la fecha de mi billete del viernes, por favor score:0.1',
      'Claro, dime el localizador de tu reserva y lo cambiamos ahora mismo score:0.2',
      'I was charged twice for the same ticket and I want my money back score:-0.5',
      'ok score:0.3',
    ])
    const events = await waitFor(async () => {
      const found = await analysisEvents(conversationId)
      return found.length >= 2 && found
    })
    expect(events[0]).toMatchObject({ type: 'analysis.messages-analyzed', version: 4 })
    const results = (events[0]!.payload as { results: { messageId: string; language?: string }[] }).results
    expect(results.map((r) => [r.messageId, r.language])).toEqual([
      ['m0', 'es'],
      ['m1', undefined],
      ['m2', 'en'],
      ['m3', undefined],
    ])
    await projectAll(db.pool)
    const { rows } = await db.pool.query(
      'SELECT message_id, language FROM rm_messages WHERE conversation_id = $1 ORDER BY message_id',
      [conversationId],
    )
    expect(rows).toEqual([
      { message_id: 'm0', language: 'es' },
      { message_id: 'm1', language: null },
      { message_id: 'm2', language: 'en' },
      { message_id: 'm3', language: null },
    ])
  })

  it("records the analyzer's language: the commit detects none of its own", async () => {
    // Detection moved into the analyzer (its thread): the commit on the service's event loop only copies it.
    await startService()
    const { conversationId } = await capture([
      'I was charged twice for the same ticket and I want my money back lang:de',
      'Sorry to hear that, let me check the booking for you right now',
    ])
    const events = await waitFor(async () => {
      const found = await analysisEvents(conversationId)
      return found.length >= 2 && found
    })
    const results = (events[0]!.payload as { results: { messageId: string; language?: string }[] }).results
    expect(results.map((r) => [r.messageId, r.language])).toEqual([
      ['m0', 'de'],
      ['m1', undefined],
    ])
  })

  it('gives a conversation without an end-user message no end-user sentiment, and the assistant its own', async () => {
    // The end user's sentiment was the mean of all messages then: "be nice" and "{}" made a positive end user.
    await startService()
    const res = await postCapture(app, apiKey, {
      conversationId: `conversation-${++n}`,
      messages: [
        { id: 's', role: 'system', content: 'be nice score:0.6' },
        { id: 't', role: 'tool', content: '{} score:0.2' },
        { id: 'a', role: 'assistant', content: 'glad to help score:0.4' },
      ],
    })
    const { conversationId } = res.json() as { conversationId: string }
    const events = await waitFor(async () => {
      const found = await analysisEvents(conversationId)
      return found.length >= 2 && found
    })
    expect(events[1]).toMatchObject({ type: 'analysis.conversation-analyzed', version: 3 })
    expect(events[1]?.payload).toEqual({
      analyzer: { name: 'scripted', version: 'test-1' },
      sentiment: null,
      assistantSentiment: { score: 0.4, label: 'positive' },
      topics: [],
    })
    await projectAll(db.pool)
    const read = await app.inject({
      method: 'GET',
      url: `/api/v1/conversations/${conversationId}`,
      headers: { cookie },
    })
    const { conversation } = read.json()
    expect(conversation.sentiment).toBeNull()
    expect(conversation.assistantSentiment).toEqual({ score: 0.4, label: 'positive' })
    expect(conversation.preview).toBeNull()
    const list = await app.inject({
      method: 'GET',
      url: '/api/v1/conversations?sentiment=positive&limit=100',
      headers: { cookie },
    })
    expect(list.json().conversations.map((c: { id: string }) => c.id)).not.toContain(conversationId)
  })

  it('claims a captured conversation’s job once it is queued, not at the job runner’s next look', async () => {
    // The job runner looked for queued jobs every 50 ms only: a capture waited up to that long for its claim.
    await startService({ jobPollIntervalMs: 600_000 })
    const { conversationId } = await capture(['so happy score:0.8 #billing', 'glad to help score:0.4'])
    await waitFor(async () => (await job(conversationId))?.status === 'done', { what: 'the job done' })
    expect(await job(conversationId)).toEqual({ status: 'done', attempts: 1 })
  })

  it('holds analysed results for a commit shared with the jobs still being analysed, never a lone job’s', async () => {
    // Each job's results went into a commit of their own as soon as none ran (bench/FINDINGS.md perf5).
    await startService({ commitHoldMs: 600_000 })
    // Alone: nothing else is being analysed, so nothing holds it (the hold would outlast the test).
    const lone = await capture(['so happy score:0.8 #billing'])
    await waitFor(async () => (await job(lone.conversationId))?.status === 'done', {
      what: 'the lone job done',
    })

    analyzer.holdContaining('slow')
    const slow = await capture(['slow score:0.1'])
    await waitFor(() => analyzer.waiting === 1, { what: 'the slow job in the analyzer' })
    const calls = analyzer.calls
    const quick = await capture(['quick score:0.5'])
    await waitFor(() => analyzer.calls > calls, { what: 'the quick job analysed' })
    // Analysed, but held while the slow job is: not committed alone.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await job(quick.conversationId)).toEqual({ status: 'running', attempts: 1 })
    analyzer.release()
    await waitFor(async () => (await job(quick.conversationId))?.status === 'done', {
      what: 'the quick job done',
    })
    expect(await job(slow.conversationId)).toEqual({ status: 'done', attempts: 1 })
    // One commit for both: the same analysed_at (a commit's now).
    const { rows } = await db.pool.query(
      'SELECT DISTINCT analyzed_at FROM analysis_results WHERE conversation_id = ANY($1::uuid[])',
      [[slow.conversationId, quick.conversationId]],
    )
    expect(rows).toHaveLength(1)
  })

  it('queues nothing when the chatbot turned analysis off', async () => {
    await startService()
    const quiet = await createChatbot(app, cookie, { name: 'quiet', settings: { analysisEnabled: false } })
    const { conversationId, analysisQueued } = await capture(['score:0.9'], quiet.apiKey)
    expect(analysisQueued).toBe(false)
    const marker = await capture(['score:0.1'])
    await waitFor(async () => (await analysisEvents(marker.conversationId)).length >= 2)
    expect(await job(conversationId)).toBeUndefined()
    expect(await analysisEvents(conversationId)).toEqual([])
  })

  it("commits jobs analyzed together in one transaction, one conversation's jobs one after the other, in order", async () => {
    await startService()
    analyzer.hold()
    const captured = [
      await capture(['one score:0.5']),
      await capture(['two score:-0.5']),
      await capture(['three score:0.1']),
    ]
    const again = await postCapture(app, apiKey, {
      conversationId: `conversation-${n}`,
      messages: [{ id: 'later', role: 'user', content: 'later score:-0.9' }],
    })
    expect(again.statusCode).toBe(200)
    // The third conversation's second job is claimed once its first is done (claimJobs): its first
    // message is analysed with the stored conversation before it.
    await waitFor(() => analyzer.waiting === 3, { what: 'three jobs at the analyzer' })
    // The first jobs are claimed as they are queued, so the second job may be queued after they are at the
    // analyzer: it stays pending while the first runs.
    const statuses = async () =>
      (
        await db.pool.query('SELECT status FROM analysis_jobs WHERE conversation_id = $1 ORDER BY id', [
          captured[2]!.conversationId,
        ])
      ).rows.map((r) => r.status)
    await waitFor(async () => (await statuses()).length === 2, { what: 'the second job queued' })
    expect(await statuses()).toEqual(['running', 'pending'])
    expect(analyzer.waiting).toBe(3)
    analyzer.release()
    const events = await waitFor(async () => {
      const all = await Promise.all(captured.map((c) => analysisEvents(c.conversationId)))
      return all.every((e, i) => e.length === (i === 2 ? 4 : 2)) && all
    })
    const { rows } = await db.pool.query<{ stream_id: string; tx: string }>(
      `SELECT stream_id, (position >> 16)::text AS tx FROM event_journal
        WHERE stream_type = 'analysis' AND stream_id = ANY($1) ORDER BY position`,
      [captured.map((c) => c.conversationId)],
    )
    const txOf = (id: string) => [...new Set(rows.filter((r) => r.stream_id === id).map((r) => r.tx))]
    const [one, two, three] = captured.map((c) => txOf(c.conversationId))
    // The first job of each conversation committed together; the third conversation's second job after.
    expect(one).toEqual(two)
    expect(three).toHaveLength(2)
    expect(three![0]).toBe(one![0])
    // The second summary covers both jobs' messages: -0.9 and 0.1 average to -0.4.
    expect(events[2]!.map((e) => e.type)).toEqual([
      'analysis.messages-analyzed',
      'analysis.conversation-analyzed',
      'analysis.messages-analyzed',
      'analysis.conversation-analyzed',
    ])
    expect((events[2]![3]!.payload as { sentiment: { score: number } }).sentiment.score).toBeCloseTo(-0.4)
  })

  it('analyses the next jobs while the earlier ones wait for their commit, as many again at most', async () => {
    await startService({ concurrency: 1 })
    // Commits wait: their results cannot be written while this transaction holds the table.
    const blocker = await db.pool.connect()
    try {
      await blocker.query('BEGIN')
      await blocker.query('LOCK TABLE analysis_results IN SHARE MODE')
      const captured = [
        await capture(['first score:0.1']),
        await capture(['second score:0.2']),
        await capture(['third score:0.3']),
      ]
      // One slot: a job is analysed and waits for its commit; another is analysed meanwhile, and no
      // third. Which two is the journal consumer's to say: it applies its partitions in no set order
      // across conversations, so the first captured may be queued last.
      await waitFor(() => analyzer.calls === 2, {
        what: 'a second job analysed before the first committed',
      })
      const states = await Promise.all(captured.map((c) => job(c.conversationId)))
      expect(states.filter((s) => s?.status === 'running')).toEqual([
        { status: 'running', attempts: 1 },
        { status: 'running', attempts: 1 },
      ])
      expect(service!.jobRunner.stats.inFlight).toBe(2)
      await blocker.query('COMMIT')
      for (const c of captured) {
        await waitFor(async () => (await job(c.conversationId))?.status === 'done', {
          what: 'every job done',
        })
      }
      expect(analyzer.calls).toBe(3)
    } finally {
      await blocker.query('ROLLBACK').catch(() => {})
      blocker.release()
    }
  })

  it('retries a failing provider with backoff until it succeeds', async () => {
    await startService({ maxAttempts: 5 })
    const { conversationId } = await capture(['flaky fail:2 score:0.5'])
    await waitFor(async () => (await job(conversationId))?.status === 'done')
    expect(await job(conversationId)).toEqual({ status: 'done', attempts: 3 })
    expect(service?.jobRunner.stats.retries).toBeGreaterThanOrEqual(2)
  })

  it('keeps analyzing other conversations while one keeps failing', async () => {
    await startService({ maxAttempts: 1_000 })
    const bad = await capture(['broken fail:retryable'])
    const good = await capture(['fine score:0.2'])
    await waitFor(async () => (await job(good.conversationId))?.status === 'done', {
      what: 'the good conversation',
    })
    const stuck = await job(bad.conversationId)
    expect(['pending', 'running']).toContain(stuck.status)
    expect(stuck.attempts).toBeGreaterThanOrEqual(1)
  })

  it('dead-letters after the last attempt with an analysis.failed event', async () => {
    await startService({ maxAttempts: 3 })
    const bad = await capture(['broken fail:retryable'])
    await waitFor(async () => (await job(bad.conversationId))?.status === 'dead')
    expect(await job(bad.conversationId)).toEqual({ status: 'dead', attempts: 3 })
    const [failed] = await analysisEvents(bad.conversationId)
    expect(failed).toMatchObject({
      type: 'analysis.failed',
      payload: {
        messageIds: ['m0'],
        attempt: 3,
        retryable: false,
        reason: expect.stringContaining('provider_error'),
      },
    })
    const { rows } = await db.pool.query(
      'SELECT attempts, reason FROM analysis_dead_letters WHERE conversation_id = $1',
      [bad.conversationId],
    )
    expect(rows).toEqual([{ attempts: 3, reason: expect.stringContaining('scripted failure') }])
  })

  it('dead-letters at once what the provider refuses for good', async () => {
    await startService({ maxAttempts: 5 })
    const { conversationId } = await capture(['refused fail:fatal'])
    await waitFor(async () => (await job(conversationId))?.status === 'dead')
    expect(await job(conversationId)).toEqual({ status: 'dead', attempts: 1 })
  })

  it('takes over a job whose worker died mid-analysis once its lease runs out', async () => {
    await startService()
    await service!.stop()
    const { conversationId } = await capture(['orphaned score:0.6'])
    // Queue it, then claim it as a worker that dies at once: a lease of zero is already over.
    const enqueuer = await startService()
    await waitFor(async () => (await job(conversationId)) !== undefined)
    await enqueuer.stop()
    // (The enqueuer's own worker may have analyzed it already, on a busy machine: count from here.)
    await db.pool.query("UPDATE analysis_jobs SET status = 'pending' WHERE conversation_id = $1", [
      conversationId,
    ])
    const before = (await job(conversationId))!.attempts as number
    const claimed = await claimJobs(db.pool, 10, 0, new Date())
    expect(claimed.map((j) => j.conversationId)).toContain(conversationId)
    await startService()
    await waitFor(async () => (await job(conversationId))?.status === 'done')
    // One attempt by the worker that died, one by the worker that took over.
    expect((await job(conversationId))?.attempts).toBe(before + 2)
  })

  it("forgets a deleted chatbot's jobs, their message content and its results", async () => {
    await startService()
    const doomed = await createChatbot(app, cookie, { name: 'doomed' })
    const { conversationId } = await capture(['delete me score:0.3'], doomed.apiKey)
    await waitFor(async () => (await job(conversationId))?.status === 'done')
    const rows = async () => {
      const { rows: found } = await db.pool.query(
        `SELECT (SELECT count(*)::int FROM analysis_jobs WHERE chatbot_id = $1) AS jobs,
                (SELECT count(*)::int FROM analysis_results WHERE chatbot_id = $1) AS results`,
        [doomed.chatbot.id],
      )
      return found[0]
    }
    expect(await rows()).toEqual({ jobs: 1, results: 1 })
    const res = await app.inject({
      method: 'DELETE',
      url: `/api/v1/chatbots/${doomed.chatbot.id}`,
      headers: { cookie },
    })
    expect(res.statusCode).toBe(200)
    await waitFor(async () => (await rows()).jobs === 0, {
      what: 'the deletion to reach the analysis service',
    })
    expect(await rows()).toEqual({ jobs: 0, results: 0 })
  })

  it('leaves the backlog in the event log when the analyzer is stuck, while capture answers as usual', async () => {
    const stuck = await startService({ maxPending: 2 })
    analyzer.hold()
    const queued = async () =>
      (
        await db.pool.query(
          "SELECT count(*)::int AS n FROM analysis_jobs WHERE status IN ('pending', 'running')",
        )
      ).rows[0].n
    // Two fill the queue (read in one batch or two: the gate is asked before each batch, so a burst
    // within one batch may pass the mark; one at a time here keeps the count exact).
    const conversations = []
    for (let i = 0; i < 2; i++) conversations.push((await capture([`waiting ${i} score:0.1`])).conversationId)
    await waitFor(() => stuck.consumer.stats.paused, { what: 'the consumer to pause' })
    expect(await queued()).toBe(2)
    const applied = stuck.consumer.stats.applied
    // The rest wait in the journal, behind the consumer's checkpoint, and stay there while the consumer
    // is paused: back-pressure, not a failure (no batch error, nothing read meanwhile).
    for (let i = 2; i < 6; i++) conversations.push((await capture([`waiting ${i} score:0.1`])).conversationId)
    // The analysis's status, reported since, counts them as waiting in the event log.
    const captured = new Date()
    await waitFor(
      async () => {
        const { rows } = await db.pool.query<{ events: number; checked_at: Date }>(
          "SELECT events, checked_at FROM pipeline_status WHERE stage = 'analysis'",
        )
        return rows[0] !== undefined && rows[0].checked_at > captured && rows[0].events >= 4
      },
      { what: 'the pipeline status to count the four captures waiting' },
    )
    expect(await queued()).toBe(2)
    expect(stuck.consumer.stats).toMatchObject({ paused: true, errors: 0, applied })
    analyzer.release()
    for (const id of conversations) {
      await waitFor(async () => (await job(id))?.status === 'done', { what: `analysis of ${id}` })
    }
    await waitFor(() => !stuck.consumer.stats.paused, { what: 'the consumer to resume' })
    expect(stuck.consumer.stats.errors).toBe(0)
  })

  // Issue 19: the analysis service read the gateway's chatbots table for settings and deleted-ness.
  it("learns a chatbot's settings from the chatbot events it consumes, and forgets them when it is deleted", async () => {
    await startService()
    const bot = await createChatbot(app, cookie, {
      name: 'topical',
      settings: { topics: { refunds: ['refund'] } },
    })
    const patched = await app.inject({
      method: 'PATCH',
      url: `/api/v1/chatbots/${bot.chatbot.id}`,
      headers: { cookie },
      payload: { settings: { topics: { returns: ['return'] } } },
    })
    expect(patched.statusCode).toBe(200)
    const settingsHere = async () =>
      (await db.pool.query('SELECT settings FROM analysis_chatbots WHERE chatbot_id = $1', [bot.chatbot.id]))
        .rows[0]?.settings
    expect(await waitFor(async () => (await settingsHere())?.topics?.returns && settingsHere())).toEqual({
      topics: { refunds: ['refund'], returns: ['return'] },
    })
    const { conversationId } = await capture(['I want a refund score:-0.5'], bot.apiKey)
    await waitFor(async () => (await job(conversationId))?.status === 'done')
    expect(analyzer.contexts.at(-1)).toEqual({ topics: { refunds: ['refund'], returns: ['return'] } })

    const deleted = await app.inject({
      method: 'DELETE',
      url: `/api/v1/chatbots/${bot.chatbot.id}`,
      headers: { cookie },
    })
    expect(deleted.statusCode).toBe(200)
    await waitFor(async () => (await settingsHere()) === undefined)
    expect(await job(conversationId)).toBeUndefined()
  })

  it("holds a job whose chatbot's settings have not arrived yet, without counting an attempt", async () => {
    await startService()
    const chatbotId = randomUUID()
    const conversationId = randomUUID()
    await enqueueJobs(
      db.pool,
      [
        {
          sourceEventId: randomUUID(),
          conversationId,
          orgId: randomUUID(),
          chatbotId,
          messages: [{ id: 'm0', role: 'user', content: 'where is my refund score:-0.4' }],
        },
      ],
      new Date(),
    )
    const deferred = async () =>
      (
        await db.pool.query(
          `SELECT status, attempts FROM analysis_jobs
            WHERE conversation_id = $1 AND next_attempt_at > created_at`,
          [conversationId],
        )
      ).rows[0]
    expect(await waitFor(deferred)).toEqual({ status: 'pending', attempts: 0 })
    expect(analyzer.calls).toBe(0)

    await rememberChatbotSettings(db.pool, chatbotId, { topics: { refunds: ['refund'] } })
    await waitFor(async () => (await job(conversationId))?.status === 'done')
    expect(await job(conversationId)).toEqual({ status: 'done', attempts: 1 })
    expect(analyzer.contexts).toEqual([{ topics: { refunds: ['refund'] } }])
  })

  it('drops the job of a chatbot deleted since, at claim time, before the chatbot.deleted is applied', async () => {
    await startService()
    const chatbotId = randomUUID()
    const conversationId = randomUUID()
    await rememberChatbotSettings(db.pool, chatbotId, {})
    await destroyDataKey(db.pool, chatbotId, randomUUID())
    await enqueueJobs(
      db.pool,
      [
        {
          sourceEventId: randomUUID(),
          conversationId,
          orgId: randomUUID(),
          chatbotId,
          messages: [{ id: 'm0', role: 'user', content: 'hello score:0.2' }],
        },
      ],
      new Date(),
    )
    await waitFor(async () => (await job(conversationId)) === undefined)
    expect(analyzer.calls).toBe(0)
    const { rows } = await db.pool.query('SELECT 1 FROM analysis_chatbots WHERE chatbot_id = $1', [chatbotId])
    expect(rows).toEqual([])
  })
})
