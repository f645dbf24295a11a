import { httpAppOptions, openInfrastructure, runService, startComposed } from '@cas/platform'
import { builtDashboardDir, queryService } from './app.ts'
import { QUERY_CONFIG } from './config.ts'

await runService('query', QUERY_CONFIG, async (config, log) => {
  const infra = await openInfrastructure(config, log, 'query', { reader: true })
  const readerPool = infra.readerPool!
  return startComposed({
    infra,
    config,
    logger: log,
    http: httpAppOptions(config, [readerPool]),
    services: [
      queryService({
        pool: infra.pool,
        readerPool,
        config,
        now: () => new Date(),
        readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
        dashboardDir: builtDashboardDir(import.meta.url, (msg) => log.warn(msg)),
      }),
    ],
  })
})
