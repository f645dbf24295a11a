import { httpAppOptions, openInfrastructure, runService, startComposed } from '@cas/platform'
import { gatewayService } from './app.ts'
import { GATEWAY_CONFIG } from './config.ts'

await runService('gateway', GATEWAY_CONFIG, async (config, log) => {
  const infra = await openInfrastructure(config, log, 'gateway')
  // close(): stops accepting connections, answers the requests in flight, then closes the pools.
  return startComposed({
    infra,
    config,
    logger: log,
    http: httpAppOptions(config, [infra.pool]),
    services: [gatewayService({ pool: infra.pool, keyring: infra.keyring, config })],
  })
})
