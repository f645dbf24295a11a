import { openInfrastructure, runService } from '@cas/platform'
import { buildGatewayApp } from './app.ts'

await runService('gateway', async (config, log) => {
  const infra = await openInfrastructure(config, log, 'gateway')
  const app = await buildGatewayApp({
    pool: infra.pool,
    keyring: infra.keyring,
    config,
    logger: log,
    readiness: infra.readiness,
  })
  await app.listen({ port: config.PORT, host: config.HOST })
  return {
    async close() {
      await app.close()
      await infra.close()
    },
  }
})
