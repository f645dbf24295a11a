import { EMBEDDED_EVENT_LOG } from '@cas/eventlog'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Reclusterer } from '../services/analysis/src/topics/reclusterer.ts'
import { type AnalysisPipeline, startAnalysisPipeline } from './support/analysis-pipeline.ts'
import { signUp } from './support/auth.ts'
import { createChatbot } from './support/chatbots.ts'
import { hasTestModel, requireTestModel } from './support/model.ts'
import { expectReplayKeeps } from './support/projector.ts'
import {
  captureRequests,
  clusterByRequest,
  EAGER,
  INSURER,
  ROADSIDE,
  SUPPORT_REQUESTS,
} from './support/topic-requests.ts'

// Regression (issue 32): a conversation counts as checked for a signal when its signals were last decided
// while the signal was on (rm_signals_decided). A re-placement in a topic (a newly found topic taking
// earlier messages, a topic created from examples, a re-clustering) sends analysis.messages-analyzed
// without deciding the signals again, and re-stamped that time: a conversation analysed while bot failure
// was off, re-placed after it was back on, counted as checked for it. Re-placements now say so
// (`signalsDecided: false`) and leave the time alone. End to end with the real language model.
requireTestModel()

/**
 * A pipeline of its own for each describe (a re-clustering run takes whichever chatbot is due), and
 * chatbots created in it with bot failure off.
 */
function harness() {
  let pipeline: AnalysisPipeline
  let app: FastifyInstance
  let cookie: string

  beforeAll(async () => {
    pipeline = await startAnalysisPipeline()
    ;({ app } = pipeline)
    ;({ cookie } = await signUp(app))
  })
  afterAll(() => pipeline?.close())

  const journalPosition = async () =>
    (
      await pipeline.db.pool.query<{ p: string }>(
        'SELECT coalesce(max(position), 0)::text AS p FROM event_journal',
      )
    ).rows[0]!.p

  /** A chatbot created with bot failure off, and what it captures (its conversations' requests). */
  async function botWithBotFailureOff() {
    const created = await createChatbot(app, cookie, {
      name: 'Insurer',
      settings: { signals: { disabled: ['bot_failure'] } },
    })
    const chatbotId = created.chatbot.id
    const requestOf = new Map<string, string>()
    return {
      chatbotId,
      requestOf,
      async capture(requests: Record<string, readonly string[]>) {
        await captureRequests(app, created.apiKey, requests, requestOf)
        await pipeline.settled()
      },
      async turnBotFailureOn() {
        const res = await app.inject({
          method: 'PATCH',
          url: `/api/v1/chatbots/${chatbotId}`,
          headers: { cookie },
          payload: { settings: { signals: { disabled: [] } } },
        })
        expect(res.statusCode, res.body).toBe(200)
        await pipeline.settled()
        return journalPosition()
      },
      /** The bot-failure figures of the signals report. */
      async botFailure() {
        const res = await app.inject({
          method: 'GET',
          url: `/api/v1/analytics/signals?chatbotId=${chatbotId}&days=7`,
          headers: { cookie },
        })
        expect(res.statusCode, res.body).toBe(200)
        return (res.json().signals as { name: string }[]).find((s) => s.name === 'bot_failure')
      },
      /** Each conversation's topic ids, by its caller's id. */
      async topics() {
        const { rows } = await pipeline.db.pool.query<{ external_id: string; topics: string[] }>(
          'SELECT external_id, topics FROM rm_conversations WHERE chatbot_id = $1',
          [chatbotId],
        )
        return new Map(rows.map((r) => [r.external_id, r.topics.join()]))
      },
      /**
       * The conversations (their callers' ids) given a re-placement after journal `position`: an
       * analysis.messages-analyzed that decided no signal.
       */
      async replacedAfter(position: string) {
        const { rows } = await pipeline.db.pool.query<{ external_id: string; decided: boolean }>(
          `SELECT DISTINCT c.external_id, j.payload->>'signalsDecided' = 'true' AS decided
             FROM event_journal j JOIN rm_conversations c ON c.id = j.stream_id
            WHERE c.chatbot_id = $1 AND j.type = 'analysis.messages-analyzed' AND j.position > $2`,
          [chatbotId, position],
        )
        return rows
          .filter((r) => !r.decided)
          .map((r) => r.external_id)
          .sort()
      },
      /** rm_signals_decided of the chatbot, by its caller's id. */
      async decidedAt() {
        const { rows } = await pipeline.db.pool.query<{ external_id: string; decided_at: Date }>(
          `SELECT c.external_id, d.decided_at FROM rm_signals_decided d JOIN rm_conversations c ON c.id = d.conversation_id
            WHERE d.chatbot_id = $1 ORDER BY c.external_id`,
          [chatbotId],
        )
        return rows.map((r) => [r.external_id, r.decided_at.toISOString()])
      },
    }
  }

  return {
    pipeline: () => pipeline,
    app: () => app,
    cookie: () => cookie,
    journalPosition,
    botWithBotFailureOff,
  }
}

describe.skipIf(!hasTestModel)(
  'conversations checked for a signal, when a newly found topic takes them',
  () => {
    const { botWithBotFailureOff } = harness()

    it('does not count as checked the conversations a newly found topic took, analysed while the signal was off', async () => {
      const bot = await botWithBotFailureOff()
      const [first, second, ...later] = SUPPORT_REQUESTS.password
      await bot.capture({ password: [first!, second!] })
      expect([...(await bot.topics()).values()]).toEqual(['other', 'other'])
      const on = await bot.turnBotFailureOn()
      await bot.capture({ later })
      // With them the waiting two make a topic: the analysis of a later message moves them into it (as
      // it may a later one analysed in an earlier job).
      const topics = await bot.topics()
      const found = topics.get('password-1')!
      expect(found).not.toBe('other')
      expect(topics.get('password-2')).toBe(found)
      expect(await bot.replacedAfter(on)).toEqual(expect.arrayContaining(['password-1', 'password-2']))
      // Checked: the later three alone, analysed while bot failure was on.
      expect(await bot.botFailure()).toMatchObject({
        enabled: true,
        conversations: 0,
        conversationsChecked: 3,
      })
    })
  },
)

describe.skipIf(!hasTestModel)(
  'conversations checked for a signal, when owners or re-clustering move them',
  () => {
    const h = harness()

    it('nor those a topic created from examples or a re-clustering moved; those analysed while it was on stay checked', async () => {
      const [pipeline, app, cookie] = [h.pipeline(), h.app(), h.cookie()]
      const bot = await h.botWithBotFailureOff()
      await bot.capture(INSURER)
      await bot.capture({ roadside: ROADSIDE.before })
      await bot.turnBotFailureOn()
      await bot.capture({ password: SUPPORT_REQUESTS.password })
      const beforeCreation = await h.journalPosition()
      const checkedWhileOn = { enabled: true, conversations: 0, conversationsChecked: 5 }
      expect(await bot.botFailure()).toMatchObject(checkedWhileOn)

      // An owner creates a topic from examples: the two roadside requests, analysed while off, move into it.
      const created = await app.inject({
        method: 'POST',
        url: `/api/v1/chatbots/${bot.chatbotId}/topics`,
        headers: { cookie },
        payload: { label: 'Roadside assistance', examples: ROADSIDE.examples },
      })
      expect(created.statusCode, created.body).toBe(200)
      await pipeline.settled()
      const roadside = created.json().topic.id
      const topics = await bot.topics()
      expect([topics.get('roadside-21'), topics.get('roadside-22')]).toEqual([roadside, roadside])
      expect(await bot.replacedAfter(beforeCreation)).toEqual(['roadside-21', 'roadside-22'])
      expect(await bot.botFailure()).toMatchObject(checkedWhileOn)

      // A re-clustering that moves claims, analysed while off. It splits the claims (their last two in a
      // cluster of their own) and keeps the drivers apart from them: whatever the placement between runs
      // made of them (one topic, two, or some waiting, as the captures fell into analysis batches), some
      // claims change topic one by one. A re-clustering that only merged their topics would move none by
      // a re-placement: a merged topic's messages follow the merge event (recluster.ts), which is what
      // failed twice in CI under load ('expected 0 to be greater than 0').
      const claims = [...bot.requestOf].filter(([, request]) => request === 'claim').map(([id]) => id)
      const requestOf = new Map(bot.requestOf)
      for (const id of claims.sort().slice(3)) requestOf.set(id, 'claim, the last two')
      const numbers = {
        claim: 0,
        'claim, the last two': 6,
        driver: 5,
        quote: 1,
        bill: 2,
        roadside: 3,
        password: 4,
      }
      const reclusterer = new Reclusterer({
        pool: pipeline.db.pool,
        analyzer: pipeline.analyzer!,
        policy: EAGER,
        cluster: clusterByRequest(pipeline.db.pool, bot.chatbotId, requestOf, numbers),
      })
      const beforeRun = await h.journalPosition()
      expect(await reclusterer.runDue()).toMatchObject({ chatbotId: bot.chatbotId, ok: true })
      await pipeline.settled()
      const moved = await bot.replacedAfter(beforeRun)
      expect(moved.filter((id) => /^(claim|driver)-/.test(id)).length).toBeGreaterThan(0)
      expect(await bot.botFailure()).toMatchObject(checkedWhileOn)

      // A rebuild from the journal reads the same times and the same report.
      const snapshot = async () => ({ decided: await bot.decidedAt(), botFailure: await bot.botFailure() })
      await expectReplayKeeps(pipeline.db.pool, pipeline.projector, snapshot, await snapshot(), {
        ...EMBEDDED_EVENT_LOG,
        pollIntervalMs: 5,
      })
    })
  },
)
