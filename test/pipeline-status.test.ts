/**
 * How current the figures are, as the dashboard (GET /api/v1/status), /readyz and the metrics say it, in
 * both event-log modes, with the real projector and analysis service running in the test's process: the
 * projection held back by not starting its consumer, the analysis by an analyzer that holds its calls.
 */
import { loadConfig } from '@cas/config'
import { Relay, relayLag } from '@cas/eventlog'
import { createHttpApp } from '@cas/http'
import { observePipelineStatus, pipelineStatusReadiness } from '@cas/platform'
import { ANALYSIS_METRICS, type AnalysisService, createAnalysisService } from '@cas/service-analysis'
import { createProjector, type Projector } from '@cas/service-projector'
import { buildQueryApp } from '@cas/service-query'
import { afterEach, describe, expect, it } from 'vitest'
import { ScriptedAnalyzer } from '../services/analysis/test/scripted-analyzer.ts'
import { signUp } from './support/auth.ts'
import { captureBody, createChatbot, postCapture } from './support/chatbots.ts'
import { uniqueGroupId } from './support/kafka.ts'
import { testKeyring } from './support/keyring.ts'
import { samples } from './support/metrics.ts'
import { EVENT_LOG_MODES, startPipeline, type TestPipeline } from './support/pipeline.ts'
import { waitFor } from './support/wait.ts'

const TEN_MINUTES_MS = 600_000

interface StatusBody {
  at: string
  projection: { state: string; behindSeconds: number | null; checkedAt: string | null }
  analysis: { state: string; behindSeconds: number | null; checkedAt: string | null }
}

for (const mode of EVENT_LOG_MODES) {
  describe.skipIf(!mode.available)(`how current the figures are, ${mode.name} mode`, () => {
    const cleanups: (() => Promise<unknown>)[] = []
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
    })

    function startProjector(pipeline: TestPipeline): Projector {
      const projector = createProjector({
        pool: pipeline.db.pool,
        keyring: testKeyring,
        eventLog: pipeline.eventLog,
        logger: false,
        groupId: uniqueGroupId('projector'),
        statusIntervalMs: 50,
      })
      projector.status.start()
      cleanups.push(async () => {
        await projector.status.stop()
        await projector.consumer.stop()
      })
      return projector
    }

    async function startAnalysis(
      pipeline: TestPipeline,
      analyzer: ScriptedAnalyzer,
    ): Promise<AnalysisService> {
      const analysis = createAnalysisService({
        pool: pipeline.db.pool,
        keyring: testKeyring,
        eventLog: pipeline.eventLog,
        analyzer,
        logger: false,
        groupId: uniqueGroupId('analysis'),
        statusIntervalMs: 50,
      })
      await analysis.start()
      cleanups.push(async () => {
        analyzer.release()
        await analysis.stop()
      })
      return analysis
    }

    it('says how far behind the read models and the analysis are, and then that they are up to date', async () => {
      // Given a gateway whose clock says its captures were committed ten minutes ago, and the query
      // service, apart, on the wall clock
      const pipeline = await startPipeline(
        mode.name,
        cleanups,
        {},
        () => new Date(Date.now() - TEN_MINUTES_MS),
      )
      const { app, db } = pipeline
      const query = await buildQueryApp({
        pool: db.pool,
        readerPool: db.readerPool,
        config: loadConfig({ DATABASE_URL: db.url }),
        logger: false,
        readiness: [],
        now: () => new Date(),
      })
      cleanups.push(() => query.close())
      const owner = await signUp(app)
      const status = async () => {
        const response = await query.inject({ url: '/api/v1/status', headers: { cookie: owner.cookie } })
        expect(response.statusCode).toBe(200)
        return response.json() as StatusBody
      }
      // Nobody has reported yet: unknown
      expect(await status()).toMatchObject({
        projection: { state: 'unknown', behindSeconds: null, checkedAt: null },
        analysis: { state: 'unknown', behindSeconds: null, checkedAt: null },
      })

      // And a projector that reports but does not apply yet, and an analyzer that holds every call
      const projector = startProjector(pipeline)
      const analyzer = new ScriptedAnalyzer()
      analyzer.hold()
      const analysis = await startAnalysis(pipeline, analyzer)
      // (In Kafka mode with nothing relayed for now: the relay's backlog is everyone's.)
      await pipeline.relay?.stop()
      // When a conversation is captured
      const { apiKey } = await createChatbot(app, owner.cookie)
      expect((await postCapture(app, apiKey, captureBody('late', 2))).statusCode).toBe(200)

      // Then both are ten minutes behind, and a tenant is told no more than that
      const behind = await waitFor(
        async () => {
          const s = await status()
          return s.projection.state === 'behind' && s.analysis.state === 'behind' && s
        },
        { what: 'both behind' },
      )
      // (and which analyzer reads the messages: no count, nobody's data)
      expect(Object.keys(behind.projection).sort()).toEqual(['behindSeconds', 'checkedAt', 'state'])
      expect(Object.keys(behind.analysis).sort()).toEqual(['analyzer', 'behindSeconds', 'checkedAt', 'state'])
      expect((behind.analysis as { analyzer?: string }).analyzer).toBe(
        `${analyzer.info.name}@${analyzer.info.version}`,
      )
      for (const stage of [behind.projection, behind.analysis]) {
        expect(stage.behindSeconds).toBeGreaterThanOrEqual(TEN_MINUTES_MS / 1000)
        expect(stage.behindSeconds).toBeLessThan(TEN_MINUTES_MS / 1000 + 60)
      }

      if (pipeline.eventLog.kind === 'kafka') {
        // When the relay publishes it all at once: it is still as late, not "since it reached Kafka"
        const relay = new Relay({
          pool: db.pool,
          kafka: pipeline.eventLog.kafka,
          topicPrefix: pipeline.eventLog.topicPrefix,
        })
        await relay.start()
        cleanups.push(() => relay.stop())
        await waitFor(async () => (await relayLag(db.pool)) === 0, { what: 'everything relayed' })
        const relayed = await status()
        expect(relayed.projection).toMatchObject({ state: 'behind' })
        expect(relayed.projection.behindSeconds).toBeGreaterThanOrEqual(TEN_MINUTES_MS / 1000)
      }

      // And operators read the same in /readyz (with the counts), which stays ready: lag is not unreadiness
      const ops = await createHttpApp({
        logger: false,
        readiness: pipelineStatusReadiness(db.pool, ['projection', 'analysis']),
      })
      cleanups.push(() => ops.close())
      observePipelineStatus(ops.metrics, db.pool, ['projection', 'analysis'])
      ops.metrics
        .use(ANALYSIS_METRICS)
        .observe({ stats: analysis.jobRunner.stats, jobs: () => analysis.jobs() })
      const ready = await waitFor(
        async () => {
          const response = await ops.inject('/readyz')
          const body = response.json()
          // (the projector has the sign-up's, the chatbot's and the capture's events to apply; the row
          // read may be a report from before the capture, which was already behind for the sign-up's)
          return (
            response.statusCode === 200 &&
            body.details.analysis.jobs === 1 &&
            body.details.projection.events >= 3 &&
            body
          )
        },
        { what: 'the job and the three events in /readyz' },
      )
      expect(ready).toEqual({
        ok: true,
        checks: {},
        details: {
          projection: {
            state: 'behind',
            behindSeconds: expect.any(Number),
            events: expect.any(Number),
            checkedAt: expect.any(String),
          },
          analysis: {
            state: 'behind',
            behindSeconds: expect.any(Number),
            events: expect.any(Number),
            jobs: 1,
            analyzer: `${analyzer.info.name}@${analyzer.info.version}`,
            checkedAt: expect.any(String),
          },
        },
      })
      expect(ready.details.projection.events).toBeGreaterThanOrEqual(3)
      expect(ready.details.projection.behindSeconds).toBeGreaterThanOrEqual(TEN_MINUTES_MS / 1000)
      // And in the metrics (scraped until they read a report with all three, as above)
      const scrape = await waitFor(
        async () => {
          const text = (await ops.metrics.render()).body
          const pending = samples(text, 'cas_pipeline_pending_events').get('{stage="projection"}') ?? 0
          return pending >= 3 && text
        },
        { what: 'the three events in the metrics' },
      )
      expect(
        samples(scrape, 'cas_pipeline_behind_seconds').get('{stage="projection"}'),
      ).toBeGreaterThanOrEqual(600)
      expect(samples(scrape, 'cas_pipeline_behind_seconds').get('{stage="analysis"}')).toBeGreaterThanOrEqual(
        600,
      )
      expect(
        samples(scrape, 'cas_pipeline_pending_events').get('{stage="projection"}'),
      ).toBeGreaterThanOrEqual(3)
      expect(samples(scrape, 'cas_pipeline_state').get('{stage="analysis",state="behind"}')).toBe(1)
      expect(samples(scrape, 'cas_analysis_oldest_job_age_seconds').get('')).toBeGreaterThanOrEqual(600)

      // When the projector applies what was committed: the read models are up to date, analysis is not
      await projector.consumer.start()
      await waitFor(async () => (await status()).projection.state === 'up-to-date', {
        what: 'the projection up to date',
      })
      expect((await status()).analysis.state).toBe('behind')

      // When the analyzer answers: analysis is up to date too
      analyzer.release()
      const current = await waitFor(
        async () => {
          const s = await status()
          return s.analysis.state === 'up-to-date' && s.projection.state === 'up-to-date' && s
        },
        { what: 'the analysis up to date' },
      )
      expect(current.analysis.behindSeconds).toBeLessThan(5)
      const after = (await ops.metrics.render()).body
      expect(samples(after, 'cas_pipeline_state').get('{stage="analysis",state="up-to-date"}')).toBe(1)
      expect(samples(after, 'cas_analysis_oldest_job_age_seconds').get('')).toBe(0)
    })
  })
}
