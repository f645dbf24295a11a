import { observeInfrastructure, openInfrastructure, runService } from '@cas/platform'
import { buildGatewayApp } from './app.ts'
import { GATEWAY_CONFIG } from './config.ts'

await runService('gateway', GATEWAY_CONFIG, async (config, log) => {
  const infra = await openInfrastructure(config, log, 'gateway')
  const app = await buildGatewayApp({
    pool: infra.pool,
    keyring: infra.keyring,
    config,
    logger: log,
    readiness: infra.readiness,
  })
  observeInfrastructure(app.metrics, infra)
  await app.listen({ port: config.PORT, host: config.HOST })
  return {
    // Stops accepting connections, answers the requests in flight, then closes the pools.
    async close() {
      await app.close()
      await infra.close()
    },
  }
})
