import { runService } from '@cas/platform'
import { startAllInOne } from './app.ts'

await runService('conversation-analytics', async (config, log) => {
  const service = await startAllInOne(config, log, log)
  log.info(
    {
      url: `http://${config.HOST}:${config.PORT}`,
      eventLog: service.infra.eventLog.kind,
      database: config.DATABASE_URL ? 'DATABASE_URL' : `embedded (${config.DATA_DIR})`,
    },
    'conversation analytics is up',
  )
  return service
})
