import { observeInfrastructure, openInfrastructure, pipelineStatusReadiness, runService } from '@cas/platform'
import { buildQueryApp, builtDashboardDir } from './app.ts'
import { QUERY_CONFIG } from './config.ts'

await runService('query', QUERY_CONFIG, async (config, log) => {
  const infra = await openInfrastructure(config, log, 'query', { reader: true })
  const app = await buildQueryApp({
    pool: infra.pool,
    readerPool: infra.readerPool!,
    config,
    logger: log,
    // What the dashboard shows of the pipeline (GET /api/v1/status), for operators too.
    readiness: [...infra.readiness, ...pipelineStatusReadiness(infra.pool, ['projection', 'analysis'])],
    now: () => new Date(),
    readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
    dashboardDir: builtDashboardDir(import.meta.url, (msg) => log.warn(msg)),
  })
  observeInfrastructure(app.metrics, infra)
  await app.listen({ port: config.PORT, host: config.HOST })
  return {
    async close() {
      await app.close()
      await infra.close()
    },
  }
})
