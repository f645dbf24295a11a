import { openInfrastructure, runService } from '@cas/platform'
import { buildRelayService } from './app.ts'
import { RELAY_CONFIG } from './config.ts'

await runService('relay', RELAY_CONFIG, async (config, log) => {
  if (!config.KAFKA_BROKERS) throw new Error('the relay publishes to Kafka: set KAFKA_BROKERS')
  const infra = await openInfrastructure(config, log, 'relay')
  const { relay, app } = await buildRelayService({
    pool: infra.pool,
    kafka: infra.kafka!,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    batchSize: config.RELAY_BATCH_SIZE,
    maxInFlight: config.RELAY_MAX_IN_FLIGHT,
    logger: log,
    readiness: infra.readiness,
  })
  await relay.start()
  await app.listen({ port: config.PORT, host: config.HOST })
  return {
    // Stops serving, lets the batches in flight be acknowledged and checkpointed, closes.
    async close() {
      await app.close()
      await relay.stop()
      await infra.close()
    },
  }
})
