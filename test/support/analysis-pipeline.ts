import { loadConfig } from '@cas/config'
import { EMBEDDED_EVENT_LOG } from '@cas/eventlog'
import {
  ANALYSIS_GROUP,
  type AnalysisService,
  type AnalysisServiceDeps,
  type Analyzer,
  createAnalysisService,
  createAnalyzer,
} from '@cas/service-analysis'
import { createProjector, PROJECTOR_GROUP, type Projector } from '@cas/service-projector'
import type { FastifyInstance } from 'fastify'
import { createTestDatabase, type TestDatabase } from './database.ts'
import { buildTestGateway } from './gateway.ts'
import { testKeyring } from './keyring.ts'
import { modelConfigEnv } from './model.ts'
import { projectorCaughtUp } from './projector.ts'
import { waitFor } from './wait.ts'

/**
 * The analysis end-to-end tests' harness (topics, signals, re-analysis): a fresh database, the gateway,
 * the analysis service on the embedded event log, and the projector, as they run deployed. The analyzer
 * is the test model's (one thread) unless one is given; `analysis: false` leaves the analysis service for
 * the test to start (startAnalysis), as a test that swaps analyzers does.
 *
 * The gateway's reads wait for this projector, as the all-in-one's do (buildTestGateway's `ownProjector`),
 * not for buildTestGateway's stand-in: that one brings rm_chatbots up to the chatbot's stream version
 * alone before each chatbot read, so a read whose read-your-writes wait is rm_chatbots at that version
 * (the topic command list, whose rm_topic_command_log the projector writes in the same transaction) went
 * on before the projector had written what it reads.
 */
export interface AnalysisPipeline {
  readonly db: TestDatabase
  readonly app: FastifyInstance
  readonly projector: Projector
  /** The analyzer of the analysis service started by the harness (undefined with `analysis: false`). */
  readonly analyzer: Analyzer | undefined
  /** The analysis service running now (startAnalysis replaces it). */
  readonly analysis: AnalysisService | undefined
  /** Starts an analysis service on `analyzer` (the one running is stopped first). */
  startAnalysis(analyzer: Analyzer, options?: AnalysisOptions): Promise<AnalysisService>
  /** Stops the analysis service running, if any. */
  stopAnalysis(): Promise<void>
  /** Waits until the captures are analysed, the commands applied and everything projected. */
  settled(options?: { timeoutMs?: number }): Promise<void>
  close(): Promise<void>
}

/** What a test may set of the analysis service besides what the harness gives it. */
export type AnalysisOptions = Partial<Omit<AnalysisServiceDeps, 'pool' | 'keyring' | 'eventLog' | 'analyzer'>>

export async function startAnalysisPipeline(
  options: {
    analyzer?: Analyzer
    analysis?: AnalysisOptions | false
    /**
     * How long the projector sleeps when it found nothing to apply (5 ms): a test of read-your-writes
     * makes it slow, so that a read that did not wait for it would miss what was just written.
     */
    projectorPollIntervalMs?: number
    /** The gateway's clock (the wall clock unless given): a test moving the analysis's clock moves it too. */
    now?: () => Date
  } = {},
): Promise<AnalysisPipeline> {
  const db = await createTestDatabase()
  // The reads' bound is CI's, under load; a read returns as soon as the projector is there.
  const { app } = await buildTestGateway(db, { READ_YOUR_WRITES_TIMEOUT_MS: '10000' }, options.now, {
    ownProjector: true,
  })
  const projector = createProjector({
    pool: db.pool,
    keyring: testKeyring,
    eventLog: { ...EMBEDDED_EVENT_LOG, pollIntervalMs: options.projectorPollIntervalMs ?? 5 },
    logger: false,
  })
  let analyzer: Analyzer | undefined
  let ownAnalyzer: Analyzer | undefined
  let analysis: AnalysisService | undefined
  const startAnalysis = async (on: Analyzer, extra: AnalysisOptions = {}) => {
    await analysis?.stop()
    analysis = createAnalysisService({
      pool: db.pool,
      keyring: testKeyring,
      eventLog: { ...EMBEDDED_EVENT_LOG, pollIntervalMs: 5 },
      analyzer: on,
      logger: false,
      ...extra,
    })
    await analysis.start()
    return analysis
  }
  if (options.analysis !== false) {
    if (options.analyzer) analyzer = options.analyzer
    else {
      ownAnalyzer = await createAnalyzer(
        loadConfig({ DATABASE_URL: db.url, ...modelConfigEnv(), ANALYSIS_THREADS: '1' }),
      )
      await ownAnalyzer.ready
      analyzer = ownAnalyzer
    }
    await startAnalysis(analyzer, options.analysis ?? {})
  }
  await projector.consumer.start()
  return {
    db,
    app,
    projector,
    get analyzer() {
      return analyzer
    },
    get analysis() {
      return analysis
    },
    startAnalysis,
    async stopAnalysis() {
      await analysis?.stop()
      analysis = undefined
    },
    async settled({ timeoutMs = 60_000 } = {}) {
      await waitFor(
        async () => {
          if (!(await projectorCaughtUp(db.pool, ANALYSIS_GROUP))) return false
          const { rows } = await db.pool.query(
            `SELECT (SELECT count(*) FROM analysis_jobs WHERE status IN ('pending', 'running'))
                  + (SELECT count(*) FROM analysis_commands WHERE status = 'pending') AS n`,
          )
          return Number(rows[0].n) === 0 && (await projectorCaughtUp(db.pool, PROJECTOR_GROUP))
        },
        { timeoutMs, what: 'analysis and projection to finish' },
      )
    },
    async close() {
      await analysis?.stop()
      await projector.consumer.stop()
      await ownAnalyzer?.close?.()
      await app.close()
      await db.drop()
    },
  }
}
