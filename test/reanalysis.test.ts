import { PROJECTOR_GROUP } from '@cas/service-projector'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ScriptedAnalyzer } from '../services/analysis/test/scripted-analyzer.ts'
import { type AnalysisPipeline, startAnalysisPipeline } from './support/analysis-pipeline.ts'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import type { TestDatabase } from './support/database.ts'
import { journalEvents } from './support/journal.ts'
import { join } from './support/members.ts'
import { projectorCaughtUp } from './support/projector.ts'
import { waitFor } from './support/wait.ts'

// Re-analysis from the dashboard (issue 31, item 6): an owner or admin asks the gateway, which commits
// chatbot.reanalysis-requested; the analysis service queues the chatbot's captures for the analyzer it runs
// now and reports progress on the chatbot's topic stream; the projector keeps the latest in rm_reanalysis,
// which GET /api/v1/chatbots/:id/reanalysis reads.

const V1 = new ScriptedAnalyzer({ name: 'scripted', version: 'v1' })
// Version 2 judges every message the opposite way.
const V2 = new ScriptedAnalyzer({ name: 'scripted', version: 'v2' }, -1)
const CAPTURES = 4

describe('re-analysing a chatbot through the API', () => {
  let pipeline: AnalysisPipeline
  let db: TestDatabase
  let app: FastifyInstance
  let cookie: string
  let memberCookie: string
  let adminCookie: string
  let chatbotId: string
  /** The captured conversations' ids. */
  const conversationIds: string[] = []

  const startAnalysis = (analyzer: ScriptedAnalyzer) =>
    pipeline.startAnalysis(analyzer, {
      commands: { maxAttempts: 5, retry: { baseMs: 50, maxMs: 200, jitter: 'equal' }, pollIntervalMs: 20 },
    })

  beforeAll(async () => {
    // The analysis service is started by the tests, each on the analyzer version it means.
    pipeline = await startAnalysisPipeline({ analysis: false })
    ;({ db, app } = pipeline)
    ;({ cookie } = await signUp(app))
    memberCookie = (await join(app, cookie, 'member')).cookie
    adminCookie = (await join(app, cookie, 'admin')).cookie
    const created = await createChatbot(app, cookie, { name: 'Support' })
    chatbotId = created.chatbot.id
    await startAnalysis(V1)
    for (let i = 0; i < CAPTURES; i++) {
      const res = await postCapture(app, created.apiKey, {
        conversationId: `c${i}`,
        messages: [{ id: 'm', role: 'user', content: 'score:0.5 #billing' }],
      })
      expect(res.statusCode, res.body).toBe(200)
      conversationIds.push(res.json().conversationId)
    }
    await waitFor(async () => (await analyzers()).filter((a) => a === 'scripted@v1').length === CAPTURES, {
      timeoutMs: 60_000,
      what: 'the first analysis',
    })
    await pipeline.stopAnalysis()
  })
  afterAll(async () => {
    V2.release()
    await pipeline?.close()
  })

  async function analyzers() {
    const { rows } = await db.pool.query<{ analyzer: string | null }>(
      'SELECT analyzer FROM rm_messages WHERE chatbot_id = $1',
      [chatbotId],
    )
    return rows.map((r) => r.analyzer)
  }

  const post = (who: string, id = chatbotId, payload: object = {}) =>
    app.inject({
      method: 'POST',
      url: `/api/v1/chatbots/${id}/reanalysis`,
      headers: { cookie: who },
      payload,
    })
  const progress = async () => {
    const res = await app.inject({
      method: 'GET',
      url: `/api/v1/chatbots/${chatbotId}/reanalysis`,
      headers: { cookie: memberCookie },
    })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().reanalysis as {
      id: string
      status: string
      analyzer: string
      done: number
      failed: number
      total: number
      finished_at: string | null
      reason: string | null
    } | null
  }

  /** Which analyzers read the chatbot's messages, as a member reads it. */
  const analyzersRead = async (id = chatbotId) => {
    const res = await app.inject({
      method: 'GET',
      url: `/api/v1/chatbots/${id}/analyzers`,
      headers: { cookie: memberCookie },
    })
    return { status: res.statusCode, body: res.json() }
  }

  it('shows no re-analysis before one was asked for', async () => {
    expect(await progress()).toBeNull()
  })

  it('refuses members (403), unknown chatbots (404) and bad bodies (400), changing nothing', async () => {
    const before = (await journalEvents(db.pool, 'chatbot', chatbotId)).length
    const member = await post(memberCookie)
    expect(member.statusCode).toBe(403)
    expect(member.json().error.code).toBe('forbidden')
    for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      const res = await post(cookie, id)
      expect(res.statusCode).toBe(404)
      expect(res.json().error.code).toBe('not_found')
    }
    const get = await app.inject({
      method: 'GET',
      url: '/api/v1/chatbots/00000000-0000-4000-8000-000000000000/reanalysis',
      headers: { cookie },
    })
    expect(get.statusCode).toBe(404)
    expect(get.json().error.code).toBe('not_found')
    for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      const analyzers = await analyzersRead(id)
      expect(analyzers.status).toBe(404)
      expect(analyzers.body.error.code).toBe('not_found')
    }
    const bad = await post(cookie, chatbotId, { since: 'yesterday' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error.code).toBe('invalid_request')
    expect((await journalEvents(db.pool, 'chatbot', chatbotId)).length).toBe(before)
  })

  it('re-analyses every capture with the current analyzer, one run at a time, and reports its progress', async () => {
    const first = await post(adminCookie)
    expect(first.statusCode, first.body).toBe(202)
    const { reanalysisId } = first.json() as { reanalysisId: string }
    // Asked for but not started (no analysis service runs): a second is refused.
    const queued = await post(cookie)
    expect(queued.statusCode).toBe(409)
    expect(queued.json().error.code).toBe('conflict')

    V2.hold()
    await startAnalysis(V2)
    await waitFor(async () => (await progress())?.status === 'running', {
      timeoutMs: 60_000,
      what: 'the re-analysis to start',
    })
    expect(await progress()).toMatchObject({
      id: reanalysisId,
      status: 'running',
      analyzer: 'scripted@v2',
      done: 0,
      total: CAPTURES,
    })
    // trial8: nothing said that past messages carry the earlier analyzer's results. Once the new analysis
    // service has reported itself, every message counts as outdated until re-analysed.
    const upgraded = await waitFor(
      async () => {
        const read = await analyzersRead()
        return read.body.current === 'scripted@v2' && read
      },
      { timeoutMs: 60_000, what: 'the new analyzer reported' },
    )
    expect(upgraded).toEqual({
      status: 200,
      body: {
        current: 'scripted@v2',
        analyzers: [{ analyzer: 'scripted@v1', messages: CAPTURES, current: false }],
        outdated: CAPTURES,
      },
    })
    const status = await app.inject({ url: '/api/v1/status', headers: { cookie: memberCookie } })
    expect(status.json().analysis.analyzer).toBe('scripted@v2')
    // ... and each message says which analyzer read it.
    const readBy = async () => {
      const res = await app.inject({
        url: `/api/v1/conversations/${conversationIds[0]}`,
        headers: { cookie: memberCookie },
      })
      expect(res.statusCode, res.body).toBe(200)
      return res.json().conversation.messages.map((m: { analyzer: string | null }) => m.analyzer)
    }
    expect(await readBy()).toEqual(['scripted@v1'])
    // Started and running: still one at a time.
    const running = await post(cookie)
    expect(running.statusCode).toBe(409)
    expect(running.json().error.code).toBe('conflict')

    V2.release()
    await waitFor(async () => (await progress())?.status === 'finished', {
      timeoutMs: 60_000,
      what: 'the re-analysis to finish',
    })
    await waitFor(() => projectorCaughtUp(db.pool, PROJECTOR_GROUP), { what: 'the projector' })
    const finished = (await progress())!
    expect(finished).toMatchObject({ id: reanalysisId, done: CAPTURES, failed: 0, total: CAPTURES })
    expect(finished.finished_at).not.toBeNull()
    await waitFor(async () => (await analyzers()).every((a) => a === 'scripted@v2'), {
      what: 'the new results to be projected',
    })
    expect((await analyzersRead()).body).toEqual({
      current: 'scripted@v2',
      analyzers: [{ analyzer: 'scripted@v2', messages: CAPTURES, current: true }],
      outdated: 0,
    })
    expect(await readBy()).toEqual(['scripted@v2'])

    // Its events, on the chatbot's topic stream, in order; progress never goes back.
    const events = (await journalEvents(db.pool, 'analysis', chatbotId)).filter((e) =>
      e.type.startsWith('analysis.reanalysis-'),
    )
    expect(events[0]).toMatchObject({
      type: 'analysis.reanalysis-started',
      payload: { reanalysisId, total: CAPTURES, analyzer: 'scripted@v2' },
    })
    expect(events.at(-1)).toMatchObject({
      type: 'analysis.reanalysis-finished',
      payload: { reanalysisId, done: CAPTURES, failed: 0 },
    })
    const done = events.slice(1, -1).map((e) => e.payload.done as number)
    expect(done).toEqual([...done].sort((a, b) => a - b))
    expect(done.every((d) => d > 0 && d < CAPTURES)).toBe(true)

    // Finished: another may start. With the same analyzer version it analyses every capture again, so that
    // signals are decided with the settings of now (a lead's first hour: a custom signal added, then
    // "Re-analyse", fired on no earlier conversation while the report counted them all as checked).
    const doneJobs = async () =>
      (
        await db.pool.query(
          "SELECT count(*)::int AS n FROM analysis_jobs WHERE chatbot_id = $1 AND status = 'done'",
          [chatbotId],
        )
      ).rows[0].n as number
    const decidedBefore = await doneJobs()
    const again = await post(cookie, chatbotId, { since: '2000-01-01T00:00:00Z' })
    expect(again.statusCode, again.body).toBe(202)
    await waitFor(
      async () => {
        const p = await progress()
        return p !== null && p.id === again.json().reanalysisId && p.status === 'finished'
      },
      { timeoutMs: 60_000, what: 'the second re-analysis to finish' },
    )
    expect(await progress()).toMatchObject({ done: CAPTURES, total: CAPTURES })
    expect(await doneJobs()).toBe(decidedBefore + CAPTURES)
    // Each capture analysed three times (v1, then both runs), each time deciding its conversation's signals.
    const { rows } = await db.pool.query(
      `SELECT count(*)::int AS n FROM event_journal WHERE chatbot_id = $1 AND type = 'analysis.messages-analyzed'`,
      [chatbotId],
    )
    expect(rows[0].n).toBe(3 * CAPTURES)
  })

  it('ends a re-analysis whose command fails for good as failed, with a reason for a lead; another is then accepted', async () => {
    // The database refuses to record the run, as a full disk would: a real failure of the real command,
    // every attempt, until the command policy sets it aside.
    await db.pool.query(`CREATE FUNCTION refuse_reanalysis() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'could not extend file "base/16384/2619": No space left on device'; END $$`)
    await db.pool.query(
      'CREATE TRIGGER refuse_reanalysis BEFORE INSERT ON analysis_reanalyses FOR EACH ROW EXECUTE FUNCTION refuse_reanalysis()',
    )
    let reanalysisId: string
    try {
      const res = await post(cookie)
      expect(res.statusCode, res.body).toBe(202)
      reanalysisId = res.json().reanalysisId
      // Until it has failed for good it counts as asked for: one at a time still.
      expect((await post(cookie)).statusCode).toBe(409)
      await waitFor(
        async () => {
          const p = await progress()
          return p?.id === reanalysisId && p.status === 'failed'
        },
        { timeoutMs: 60_000, what: 'the re-analysis to fail' },
      )
    } finally {
      await db.pool.query('DROP TRIGGER refuse_reanalysis ON analysis_reanalyses')
      await db.pool.query('DROP FUNCTION refuse_reanalysis()')
    }
    const failed = (await progress())!
    expect(failed).toMatchObject({ id: reanalysisId, status: 'failed', analyzer: 'scripted@v2', total: 0 })
    expect(failed.finished_at).not.toBeNull()
    // The reason is for a lead: how often it was tried, never the database's words.
    expect(failed.reason).toContain('5 attempts')
    expect(failed.reason).not.toMatch(/space|base\/|extend/)
    const events = (await journalEvents(db.pool, 'analysis', chatbotId)).filter((e) =>
      e.type.startsWith('analysis.reanalysis-'),
    )
    expect(events.at(-1)).toMatchObject({
      type: 'analysis.reanalysis-failed',
      payload: { reanalysisId, analyzer: 'scripted@v2', attempts: 5, reason: failed.reason },
    })
    const { rows } = await db.pool.query(
      "SELECT status, attempts, last_error FROM analysis_commands WHERE type = 'chatbot.reanalysis-requested'",
    )
    expect(rows).toEqual([
      { status: 'dead', attempts: 5, last_error: expect.stringContaining('No space left on device') },
    ])

    // Failed: another is accepted, and runs.
    const again = await post(cookie)
    expect(again.statusCode, again.body).toBe(202)
    await waitFor(
      async () => {
        const p = await progress()
        return p !== null && p.id === again.json().reanalysisId && p.status === 'finished'
      },
      { timeoutMs: 60_000, what: 'the next re-analysis to finish' },
    )
    expect(await progress()).toMatchObject({ status: 'finished', total: CAPTURES, reason: null })
  })

  it("ends a running re-analysis with its chatbot's deletion, its read-model row dropped", async () => {
    await pipeline.stopAnalysis()
    const v3 = new ScriptedAnalyzer({ name: 'scripted', version: 'v3' })
    v3.hold()
    await startAnalysis(v3)
    try {
      const res = await post(cookie)
      expect(res.statusCode, res.body).toBe(202)
      await waitFor(async () => (await progress())?.status === 'running', {
        timeoutMs: 60_000,
        what: 'the re-analysis to start',
      })
      const runs = async () =>
        (await db.pool.query('SELECT 1 FROM analysis_reanalyses WHERE chatbot_id = $1', [chatbotId])).rowCount
      expect(await runs()).toBe(1)
      const deleted = await app.inject({
        method: 'DELETE',
        url: `/api/v1/chatbots/${chatbotId}`,
        headers: { cookie },
      })
      expect(deleted.statusCode, deleted.body).toBeLessThan(300)
      await waitFor(async () => (await runs()) === 0, { timeoutMs: 60_000, what: 'the run forgotten' })
      await waitFor(
        async () =>
          (await db.pool.query('SELECT 1 FROM rm_reanalysis WHERE chatbot_id = $1', [chatbotId])).rowCount ===
          0,
        { timeoutMs: 60_000, what: 'the read model row dropped' },
      )
    } finally {
      v3.release()
    }
  })
})
