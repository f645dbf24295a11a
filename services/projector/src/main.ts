import { openInfrastructure, runService, startComposed } from '@cas/platform'
import { projectorService } from './app.ts'
import { PROJECTOR_CONFIG } from './config.ts'

await runService('projector', PROJECTOR_CONFIG, async (config, log) => {
  const infra = await openInfrastructure(config, log, 'projector')
  // close(): stops serving, finishes and commits the batch in flight, leaves the group, closes the pool.
  return startComposed({
    infra,
    config,
    logger: log,
    services: [projectorService(infra, log, { statusRoute: true })],
  })
})
