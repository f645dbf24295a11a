import { loadConfig } from '@cas/config'
import { Metrics } from '@cas/metrics'
import {
  ANALYSIS_METRICS,
  type AnalysisService,
  type Analyzer,
  analysisSettings,
  createAnalyzer,
} from '@cas/service-analysis'
import type { Projector } from '@cas/service-projector'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SIGNAL_DEFINITIONS, type SignalRefineOptions } from '../services/analysis/src/signals/llm-refine.ts'
import {
  type Behaviour,
  type FakeChatServer,
  type RecordedRequest,
  startFakeChatServer,
} from '../services/analysis/test/fake-chat-server.ts'
import { type AnalysisPipeline, startAnalysisPipeline } from './support/analysis-pipeline.ts'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import type { TestDatabase } from './support/database.ts'
import { journalEvents } from './support/journal.ts'
import { hasTestModel, modelConfigEnv, requireTestModel } from './support/model.ts'
import { expectReplayKeeps, projectorCaughtUp } from './support/projector.ts'
import { waitFor } from './support/wait.ts'

// Optional LLM refinement of borderline conversation signals (SIGNALS_LLM_REFINE=borderline): the real
// language model decides the signals, an OpenAI-compatible fake (fake-chat-server.ts) plays the LLM.
requireTestModel()

interface Signal {
  name: string
  confidence: number
  evidence: string[]
  refinedBy?: string
}

const LLM = { LLM_API_KEY: 'sk-refine-test', LLM_MODEL: 'judge-model' }

/** A question the bot does not understand: bot_failure fires on the answer (test/signals.test.ts). */
const notUnderstood = (thing: string) =>
  [
    { id: 'm0', role: 'user' as const, content: `What is the warranty on refurbished ${thing}?` },
    { id: 'm1', role: 'assistant' as const, content: "I'm not sure I understand." },
  ] as const

/** The signals the request asks about. */
const askedIn = (request: RecordedRequest): { name: string; definition: string; evidence: string[] }[] =>
  JSON.parse(request.chatMessages.at(-1)!.content).signals
const transcriptOf = (request: RecordedRequest) => request.input.map((m) => m.content).join('\n')
const verdicts = (request: RecordedRequest, present: boolean): Behaviour => ({
  content: JSON.stringify({ verdicts: askedIn(request).map((s) => ({ signal: s.name, present })) }),
})

describe.skipIf(!hasTestModel)('signals refined by an LLM, with the language model', () => {
  let pipeline: AnalysisPipeline
  let db: TestDatabase
  let app: FastifyInstance
  let analyzer: Analyzer
  let projector: Projector
  let server: FakeChatServer
  let apiKey: string
  let cookie: string
  let chatbotId: string

  beforeAll(async () => {
    // The analysis services are the tests' own (each with its refinement): started by startAnalysis.
    pipeline = await startAnalysisPipeline({ analysis: false })
    ;({ db, app, projector } = pipeline)
    server = await startFakeChatServer()
    analyzer = await createAnalyzer(
      loadConfig({ DATABASE_URL: db.url, ...modelConfigEnv(), ANALYSIS_THREADS: '1' }),
    )
    await analyzer.ready
    ;({ cookie } = await signUp(app))
    ;({
      apiKey,
      chatbot: { id: chatbotId },
    } = await createChatbot(app, cookie, { name: 'Refined' }))
  })
  afterAll(async () => {
    await pipeline?.stopAnalysis()
    await analyzer?.close?.()
    await server?.close()
    await pipeline?.close()
  })

  /** Starts an analysis service with the given refinement (none: as configured by `env`). */
  const startAnalysis = (signalRefine: SignalRefineOptions | undefined): Promise<AnalysisService> =>
    pipeline.startAnalysis(analyzer, { signalSweepMs: 3_600_000, signalRefine })

  const refine = (overrides: Partial<SignalRefineOptions> = {}): SignalRefineOptions => ({
    baseUrl: server.baseUrl,
    apiKey: LLM.LLM_API_KEY,
    model: LLM.LLM_MODEL,
    timeoutMs: 5_000,
    concurrency: 2,
    pollMs: 20,
    ...overrides,
  })

  async function capture(
    name: string,
    messages: readonly { id: string; role: 'user' | 'assistant'; content: string }[],
    user?: string,
  ) {
    const res = await postCapture(app, apiKey, {
      conversationId: name,
      messages: [...messages],
      ...(user ? { user: { id: user } } : {}),
    })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().conversationId as string
  }

  async function signalEvents(conversationId: string, atLeast: number): Promise<Signal[][]> {
    return waitFor(
      async () => {
        const events = (await journalEvents(db.pool, 'analysis', conversationId)).filter(
          (e) => e.type === 'analysis.signals-detected',
        )
        return events.length >= atLeast && events.map((e) => e.payload.signals as Signal[])
      },
      { what: `${atLeast} signals-detected event(s)`, timeoutMs: 120_000 },
    )
  }

  /** The conversation's refinement state once the refiner has dealt with it. */
  async function judged(conversationId: string) {
    return waitFor(
      async () => {
        const { rows } = await db.pool.query(
          'SELECT refine_due, llm_verdicts, signals FROM analysis_signal_state WHERE conversation_id = $1',
          [conversationId],
        )
        const row = rows[0]
        return row && !row.refine_due && row.llm_verdicts.length > 0 && row
      },
      { what: 'the LLM verdicts', timeoutMs: 120_000 },
    )
  }

  /** The conversation's signals as GET /api/v1/conversations/:id gives them (undefined until projected). */
  async function apiSignals(
    conversationId: string,
  ): Promise<(Signal & { refinedBy: string | null })[] | undefined> {
    const res = await app.inject({
      method: 'GET',
      url: `/api/v1/conversations/${conversationId}`,
      headers: { cookie },
    })
    if (res.statusCode === 503) return undefined
    expect(res.statusCode, res.body).toBe(200)
    return res.json().conversation.signals
  }

  const requestsAbout = (thing: string) => server.requests.filter((r) => transcriptOf(r).includes(thing))

  it('sends nothing to the LLM by default, even with LLM_* set', async () => {
    const config = loadConfig({
      DATABASE_URL: db.url,
      ...modelConfigEnv(),
      LLM_BASE_URL: server.baseUrl,
      ...LLM,
    })
    const settings = analysisSettings(config)
    expect(settings.signalRefine).toBeUndefined()
    const analysis = await startAnalysis(settings.signalRefine)
    try {
      const before = server.requests.length
      const id = await capture('off', notUnderstood('printers'))
      const [local] = await signalEvents(id, 1)
      expect(local!.map((s) => s.name)).toContain('bot_failure')
      expect(local!.every((s) => s.refinedBy === undefined)).toBe(true)
      await waitFor(() => projectorCaughtUp(db.pool), { what: 'projection', timeoutMs: 60_000 })
      const shown = (await apiSignals(id))!
      expect(shown.map((s) => s.name)).toContain('bot_failure')
      expect(shown.every((s) => s.refinedBy === null)).toBe(true)
      const { rows } = await db.pool.query(
        'SELECT refine_due FROM analysis_signal_state WHERE conversation_id = $1',
        [id],
      )
      expect(rows[0].refine_due).toBe(false)
      expect(analysis.signalRefiner).toBeUndefined()
      expect(server.requests.length).toBe(before)
    } finally {
      await pipeline.stopAnalysis()
    }
  })

  describe('with SIGNALS_LLM_REFINE=borderline and every signal in the band', () => {
    let analysis: AnalysisService

    beforeAll(async () => {
      // Everything that fires is borderline here, so the tests do not depend on the model's exact margins.
      server.defaultBehaviour = (request) => {
        const text = transcriptOf(request)
        if (text.includes('phones')) return verdicts(request, false)
        if (text.includes('tablets')) return { status: 500 }
        if (text.includes('monitors')) return 'hold'
        if (text.includes('keyboards')) return { content: 'I think the bot failed, yes.' }
        if (text.includes('scanners')) return 'hold'
        return verdicts(request, true)
      }
      analysis = await startAnalysis(refine({ borderlineBelow: 1.01 }))
    })
    afterAll(async () => {
      server.defaultBehaviour = 'ok'
      await pipeline.stopAnalysis()
    })

    it('confirms a borderline signal once, with the transcript and its definition, and says so in the event', async () => {
      const id = await capture('confirmed', notUnderstood('laptops'))
      const [local, refined] = await signalEvents(id, 2)
      const failure = local!.find((s) => s.name === 'bot_failure')!
      expect(failure).toMatchObject({ evidence: ['m1'] })
      expect(failure.refinedBy).toBeUndefined()
      expect(refined!.find((s) => s.name === 'bot_failure')).toEqual({
        ...failure,
        refinedBy: 'llm:judge-model',
      })
      const requests = requestsAbout('laptops')
      expect(requests).toHaveLength(1)
      const [request] = requests as [RecordedRequest]
      expect(request.model).toBe('judge-model')
      expect(request.authorization).toBe('Bearer sk-refine-test')
      expect(request.input.map((m) => m.id)).toEqual(['m0', 'm1'])
      expect(askedIn(request)).toContainEqual({
        name: 'bot_failure',
        definition: SIGNAL_DEFINITIONS.bot_failure,
        evidence: ['m1'],
      })
      expect(request.responseFormat).toMatchObject({ type: 'json_schema' })
      // The read model and the conversation's API say which LLM confirmed it; the local ones say none.
      const shown = await waitFor(
        async () => {
          const signals = await apiSignals(id)
          return signals?.some((s) => s.refinedBy !== null) && signals
        },
        { what: 'the refined signal in the API', timeoutMs: 60_000 },
      )
      expect(shown.find((s) => s.name === 'bot_failure')).toEqual({
        name: 'bot_failure',
        label: null,
        confidence: Math.round(failure.confidence * 100) / 100,
        evidence: ['m1'],
        refinedBy: 'llm:judge-model',
      })
      for (const s of refined!.filter((x) => x.refinedBy === undefined))
        expect(shown.find((x) => x.name === s.name)?.refinedBy).toBeNull()
      const listed = await app.inject({
        method: 'GET',
        url: `/api/v1/conversations?chatbotId=${chatbotId}&signal=bot_failure&limit=100`,
        headers: { cookie },
      })
      expect(listed.statusCode, listed.body).toBe(200)
      const inList = listed.json().conversations.find((c: { id: string }) => c.id === id)
      expect(inList.signals).toEqual(shown)
    })

    it('leaves out a borderline signal the LLM rejects', async () => {
      const id = await capture('rejected', notUnderstood('phones'))
      const [local, refined] = await signalEvents(id, 2)
      expect(local!.map((s) => s.name)).toContain('bot_failure')
      expect(refined!.map((s) => s.name)).not.toContain('bot_failure')
      expect(requestsAbout('phones')).toHaveLength(1)
      // The read model follows the events: the rejected signal is gone there too.
      await waitFor(() => projectorCaughtUp(db.pool), { what: 'projection', timeoutMs: 60_000 })
      const { rows } = await db.pool.query(
        'SELECT signal FROM rm_conversation_signals WHERE conversation_id = $1',
        [id],
      )
      expect(rows.map((r) => r.signal)).not.toContain('bot_failure')
    })

    for (const [what, thing] of [
      ['an error status', 'tablets'],
      ['a timeout', 'monitors'],
      ['an answer that is not the requested JSON', 'keyboards'],
    ] as const) {
      it(`keeps the local signals after ${what}, counts it, and does not ask again`, async () => {
        const failedBefore = Object.values(analysis.signalRefiner!.stats.failed).reduce((a, b) => a + b, 0)
        const id = await capture(thing, notUnderstood(thing))
        const [local] = await signalEvents(id, 1)
        const state = await judged(id)
        expect(state.llm_verdicts.every((v: { present: unknown }) => v.present === null)).toBe(true)
        expect(state.signals).toEqual(local)
        expect(state.signals.map((s: Signal) => s.name)).toContain('bot_failure')
        const failedAfter = Object.values(analysis.signalRefiner!.stats.failed).reduce((a, b) => a + b, 0)
        expect(failedAfter).toBeGreaterThan(failedBefore)
        expect(requestsAbout(thing)).toHaveLength(1)
        if (thing === 'monitors') expect(requestsAbout(thing)[0]!.abandoned).toBe(true)
        // Deciding again with the same messages (the sweep, made due) reuses the verdict: no new ask.
        await db.pool.query(
          "UPDATE analysis_signal_state SET due_at = now() - interval '1 second' WHERE conversation_id = $1",
          [id],
        )
        expect(await analysis.jobRunner.sweepSignals()).toBe(0)
        const { rows } = await db.pool.query(
          'SELECT refine_due, due_at > now() AS redecided FROM analysis_signal_state WHERE conversation_id = $1',
          [id],
        )
        expect(rows[0]).toEqual({ refine_due: false, redecided: true })
        expect(
          (await journalEvents(db.pool, 'analysis', id)).filter(
            (e) => e.type === 'analysis.signals-detected',
          ),
        ).toHaveLength(1)
        expect(requestsAbout(thing)).toHaveLength(1)
      })
    }

    it('leaves nothing behind for a conversation erased while the LLM is asked', async () => {
      const id = await capture('erased', notUnderstood('scanners'), 'erin')
      await signalEvents(id, 1)
      await server.waitUntil(() => server.held.some((r) => transcriptOf(r).includes('scanners')))
      const confirmedBefore = analysis.signalRefiner!.stats.confirmed
      const res = await app.inject({
        method: 'DELETE',
        url: `/api/v1/chatbots/${chatbotId}/users/erin`,
        headers: { cookie },
      })
      expect(res.json()).toEqual({ ok: true, conversationsErased: 1 })
      await waitFor(
        async () =>
          (await db.pool.query('SELECT 1 FROM analysis_results WHERE conversation_id = $1', [id])).rows
            .length === 0,
        { what: 'the analysis to forget the conversation', timeoutMs: 60_000 },
      )
      server.releaseWhere(
        (r) => transcriptOf(r).includes('scanners'),
        (request) => verdicts(request, true),
      )
      await waitFor(() => analysis.signalRefiner!.stats.confirmed > confirmedBefore, {
        what: 'the verdict',
        timeoutMs: 60_000,
      })
      await analysis.signalRefiner!.stop()
      analysis.signalRefiner!.start()
      const { rows } = await db.pool.query('SELECT 1 FROM analysis_signal_state WHERE conversation_id = $1', [
        id,
      ])
      expect(rows).toEqual([])
    })

    it('counts the outcomes in cas_analysis_signal_refinements_total', async () => {
      const metrics = new Metrics()
      metrics.use(ANALYSIS_METRICS).observe({
        stats: analysis.jobRunner.stats,
        jobs: () => analysis.jobs(),
        signalRefinement: () => analysis.signalRefiner?.stats,
      })
      const { body } = await metrics.render()
      const count = (outcome: string) =>
        Number(
          new RegExp(`cas_analysis_signal_refinements_total\\{outcome="${outcome}"\\} (\\d+)`).exec(
            body,
          )?.[1],
        )
      for (const outcome of ['confirmed', 'rejected', 'timeout', 'error', 'invalid'])
        expect(count(outcome), outcome).toBeGreaterThanOrEqual(1)
    })

    it('rebuilds the refined signals from the events on a replay, without asking the LLM', async () => {
      await waitFor(() => projectorCaughtUp(db.pool), { what: 'projection', timeoutMs: 60_000 })
      const snapshot = async () =>
        (
          await db.pool.query(
            'SELECT conversation_id, signal, confidence, evidence, refined_by FROM rm_conversation_signals ORDER BY 1, 2',
          )
        ).rows
      const before = await snapshot()
      // The property can only fail with a refined signal among them.
      expect(before.filter((r) => r.refined_by === 'llm:judge-model').length).toBeGreaterThan(0)
      const asked = server.requests.length
      await expectReplayKeeps(db.pool, projector, snapshot, before)
      expect(server.requests.length).toBe(asked)
    })
  })

  it('never sends a signal beyond the borderline band', async () => {
    server.defaultBehaviour = (request) => verdicts(request, false)
    await startAnalysis(refine())
    try {
      const conversations = {
        person: [{ id: 'm0', role: 'user' as const, content: 'I want to talk to a human agent, now.' }],
        cameras: notUnderstood('cameras'),
      }
      const locals: Signal[] = []
      for (const [name, messages] of Object.entries(conversations)) {
        const id = await capture(name, messages)
        locals.push(...(await signalEvents(id, 1))[0]!)
      }
      const strong = locals.filter((s) => s.confidence >= 0.75)
      // The property can only fail with a signal beyond the band among them.
      expect(strong.length).toBeGreaterThan(0)
      await waitFor(
        async () =>
          (await db.pool.query('SELECT 1 FROM analysis_signal_state WHERE refine_due')).rows.length === 0 &&
          server.inFlight === 0,
        { what: 'the refiner idle', timeoutMs: 60_000 },
      )
      const asked = server.requests
        .filter((r) => transcriptOf(r).includes('human agent') || transcriptOf(r).includes('cameras'))
        .flatMap(askedIn)
      for (const signal of strong) {
        expect(
          asked.some((a) => a.name === signal.name && a.evidence.join() === signal.evidence.join()),
        ).toBe(false)
      }
      for (const a of asked) {
        const local = locals.find((s) => s.name === a.name && s.evidence.join() === a.evidence.join())
        expect(local!.confidence).toBeLessThan(0.75)
      }
    } finally {
      server.defaultBehaviour = 'ok'
      await pipeline.stopAnalysis()
    }
  })
})
