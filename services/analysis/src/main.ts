import { createHttpApp } from '@cas/http'
import { openInfrastructure, runService } from '@cas/platform'
import { analysisSettings, createAnalysisService } from './app.ts'
import { createAnalyzer } from './providers/index.ts'

await runService('analysis', async (config, log) => {
  const infra = await openInfrastructure(config, log, 'analysis')
  const analyzer = await createAnalyzer(config, (msg, fields) => log.warn(fields ?? {}, msg))
  log.info({ analyzer: analyzer.info }, 'analyzer ready')
  const service = createAnalysisService({
    pool: infra.pool,
    keyring: infra.keyring,
    eventLog: infra.eventLog,
    analyzer,
    logger: log,
    ...analysisSettings(config),
  })
  await service.start()
  const app = await createHttpApp({ logger: log, readiness: infra.readiness })
  app.get('/analysis', async () => ({ ok: true, analyzer: analyzer.info, worker: service.worker.stats }))
  await app.listen({ port: config.PORT, host: config.HOST })
  return {
    async close() {
      await app.close()
      await service.stop()
      await infra.close()
    },
  }
})
