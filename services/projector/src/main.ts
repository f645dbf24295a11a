import { createHttpApp } from '@cas/http'
import { openInfrastructure, runService } from '@cas/platform'
import { createProjector } from './app.ts'

await runService('projector', async (config, log) => {
  const infra = await openInfrastructure(config, log, 'projector')
  const projector = createProjector({
    pool: infra.pool,
    keyring: infra.keyring,
    eventLog: infra.eventLog,
    logger: log,
  })
  await projector.consumer.start()
  const app = await createHttpApp({ logger: log, readiness: infra.readiness })
  app.get('/projector', async () => ({
    ok: true,
    consumer: projector.consumer.stats,
    projection: projector.stats,
  }))
  await app.listen({ port: config.PORT, host: config.HOST })
  return {
    async close() {
      await app.close()
      await projector.consumer.stop()
      await infra.close()
    },
  }
})
