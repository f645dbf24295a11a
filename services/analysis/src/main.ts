import { openInfrastructure, runService, startComposed } from '@cas/platform'
import { analysisService } from './app.ts'
import { ANALYSIS_CONFIG } from './config.ts'

await runService('analysis', ANALYSIS_CONFIG, async (config, log) => {
  const infra = await openInfrastructure(config, log, 'analysis')
  // close(): stops serving, stops consuming (committing the batch in flight), lets the jobs in flight commit.
  return startComposed({
    infra,
    config,
    logger: log,
    services: [analysisService(infra, config, log, { statusRoute: true })],
  })
})
