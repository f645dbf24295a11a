import { openInfrastructure, runService } from '@cas/platform'
import { buildQueryApp } from './app.ts'

await runService('query', async (config, log) => {
  const infra = await openInfrastructure(config, log, 'query')
  const app = await buildQueryApp({ logger: log, readiness: infra.readiness })
  await app.listen({ port: config.PORT, host: config.HOST })
  return {
    async close() {
      await app.close()
      await infra.close()
    },
  }
})
