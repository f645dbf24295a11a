import { runService } from '@cas/platform'
import { builtDashboardDir } from '@cas/service-query'
import { startAllInOne } from './app.ts'
import { ALL_IN_ONE_CONFIG } from './config.ts'

await runService('conversation-analytics', ALL_IN_ONE_CONFIG, async (config, log) => {
  const dashboardDir = builtDashboardDir(import.meta.url, (msg) => log.warn(msg))
  const service = await startAllInOne(config, log, log, { dashboardDir })
  log.info(
    {
      url: `http://${config.HOST}:${config.PORT}`,
      dashboard: dashboardDir ? `http://${config.HOST}:${config.PORT}/` : 'not built',
      eventLog: service.infra.eventLog.kind,
      database: config.DATABASE_URL ? 'DATABASE_URL' : `embedded (${config.DATA_DIR})`,
    },
    'conversation analytics is up',
  )
  return service
})
