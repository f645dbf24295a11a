import { createHttpApp } from '@cas/http'
import {
  deadLetterReadiness,
  observeInfrastructure,
  observePipelineStatus,
  openInfrastructure,
  pipelineStatusReadiness,
  runService,
} from '@cas/platform'
import { analysisSettings, createAnalysisService } from './app.ts'
import { ANALYSIS_CONFIG } from './config.ts'
import { analyzerReadiness, analyzerStatus, createAnalyzer } from './providers/index.ts'

await runService('analysis', ANALYSIS_CONFIG, async (config, log) => {
  const infra = await openInfrastructure(config, log, 'analysis')
  const analyzer = await createAnalyzer(config, (msg, fields) => log.warn(fields ?? {}, msg))
  analyzer.ready?.then(() => log.info({ analyzer: analyzerStatus(analyzer) }, 'analyzer ready'))
  const service = createAnalysisService({
    pool: infra.pool,
    keyring: infra.keyring,
    eventLog: infra.eventLog,
    analyzer,
    logger: log,
    ...analysisSettings(config),
  })
  await service.start()
  const app = await createHttpApp({
    logger: log,
    readiness: [
      ...infra.readiness,
      analyzerReadiness(analyzer),
      ...pipelineStatusReadiness(infra.pool, ['analysis']),
      deadLetterReadiness(infra.pool),
    ],
  })
  observeInfrastructure(app.metrics, infra)
  observePipelineStatus(app.metrics, infra.pool, ['analysis'])
  app.metrics.observeConsumer(service.consumer)
  app.metrics.observeAnalysis({
    stats: service.worker.stats,
    jobs: () => service.jobs(),
    analyzer: () => analyzerStatus(analyzer),
  })
  app.get('/analysis', async () => ({
    ok: true,
    analyzer: analyzerStatus(analyzer),
    worker: service.worker.stats,
    reclustering: service.reclusterer?.stats ?? null,
  }))
  await app.listen({ port: config.PORT, host: config.HOST })
  return {
    // Stops serving, stops consuming (committing the batch in flight), lets the jobs in flight commit.
    async close() {
      await app.close()
      await service.stop()
      await analyzer.close?.()
      await infra.close()
    },
  }
})
