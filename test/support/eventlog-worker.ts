/**
 * A consumer or relay in a process of its own, for tests that kill it with SIGKILL.
 * Config from the environment: ROLE (consumer | relay), DATABASE_URL, BACKEND (journal | kafka),
 * KAFKA_BROKERS, TOPIC_PREFIX, GROUP_ID, PARTITIONS, BATCH_DELAY_MS. Kafka sessions are short (6 s, the
 * broker's minimum) so the group notices a killed member quickly.
 * The consumer records each event in `test_applied` and prints `in-batch <n>` while its transaction is
 * still open, then holds the transaction open for BATCH_DELAY_MS, so a kill lands mid-batch.
 */
import { createPool } from '@cas/db'
import { createEventConsumer, createKafka, type EventLogBackend, Relay } from '@cas/eventlog'
import { recordApplied } from './applied.ts'

const env = process.env
const pool = createPool(env.DATABASE_URL!, { max: 4 })
const kafka = env.KAFKA_BROKERS
  ? createKafka({
      brokers: env.KAFKA_BROKERS.split(','),
      logLevel: (env.KAFKA_LOG_LEVEL as 'info') ?? 'nothing',
    })
  : undefined

if (env.ROLE === 'relay') {
  const relay = new Relay({ pool, kafka: kafka!, topicPrefix: env.TOPIC_PREFIX, batchSize: 50 })
  await relay.start()
  const report = setInterval(() => console.log(`published ${relay.stats.published}`), 20)
  report.unref()
} else {
  const backend: EventLogBackend =
    env.BACKEND === 'kafka'
      ? { kind: 'kafka', kafka: kafka!, topicPrefix: env.TOPIC_PREFIX, sessionTimeoutMs: 6_000 }
      : { kind: 'journal', partitions: Number(env.PARTITIONS ?? 1), pollIntervalMs: 10 }
  let batches = 0
  const consumer = createEventConsumer(backend, {
    pool,
    groupId: env.GROUP_ID!,
    streamTypes: ['conversation'],
    maxBatchSize: 25,
    log: (msg, fields) => console.error(new Date().toISOString(), msg, JSON.stringify(fields)),
    handler: async (records, client) => {
      await recordApplied(client, records)
      console.log(`in-batch ${++batches}`)
      await new Promise((r) => setTimeout(r, Number(env.BATCH_DELAY_MS ?? 50)))
    },
  })
  await consumer.start()
}
console.log('ready')
