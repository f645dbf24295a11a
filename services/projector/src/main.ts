import { createHttpApp } from '@cas/http'
import {
  deadLetterReadiness,
  observeInfrastructure,
  observePipelineStatus,
  openInfrastructure,
  pipelineStatusReadiness,
  runService,
} from '@cas/platform'
import { startProjector } from './app.ts'
import { PROJECTOR_CONFIG } from './config.ts'

await runService('projector', PROJECTOR_CONFIG, async (config, log) => {
  const infra = await openInfrastructure(config, log, 'projector')
  const projector = await startProjector(infra, log)
  const app = await createHttpApp({
    logger: log,
    readiness: [
      ...infra.readiness,
      ...pipelineStatusReadiness(infra.pool, ['projection']),
      deadLetterReadiness(infra.pool),
    ],
  })
  observeInfrastructure(app.metrics, infra)
  observePipelineStatus(app.metrics, infra.pool, ['projection'])
  app.metrics.observeConsumer(projector.consumer)
  app.get('/projector', async () => ({
    ok: true,
    consumer: projector.consumer.stats,
    projection: projector.stats,
  }))
  await app.listen({ port: config.PORT, host: config.HOST })
  return {
    // Stops serving, finishes and commits the batch in flight, leaves the group, closes the pool.
    async close() {
      await app.close()
      await projector.status.stop()
      await projector.consumer.stop()
      await infra.close()
    },
  }
})
