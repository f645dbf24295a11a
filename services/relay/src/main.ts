import { openInfrastructure, runService, startComposed } from '@cas/platform'
import { relayService } from './app.ts'
import { RELAY_CONFIG } from './config.ts'

await runService('relay', RELAY_CONFIG, async (config, log) => {
  if (!config.KAFKA_BROKERS) throw new Error('the relay publishes to Kafka: set KAFKA_BROKERS')
  const infra = await openInfrastructure(config, log, 'relay')
  // close(): stops serving, lets the batches in flight be acknowledged and checkpointed, closes.
  return startComposed({
    infra,
    config,
    logger: log,
    services: [
      relayService(
        {
          pool: infra.pool,
          kafka: infra.kafka!,
          topicPrefix: config.KAFKA_TOPIC_PREFIX,
          batchSize: config.RELAY_BATCH_SIZE,
          maxInFlight: config.RELAY_MAX_IN_FLIGHT,
          logger: log,
        },
        { statusRoute: true },
      ),
    ],
  })
})
