/**
 * The distributed deployment as separate processes against Kafka: a gateway, the relay and projector(s),
 * on a test database and topics (and consumer groups) of their own, plus one signed-up organization with
 * a chatbot to capture for.
 */
import { randomBytes } from 'node:crypto'
import { consumerLag, createKafka, kafkaGroupId, STREAM_TYPES, topicFor } from '@cas/eventlog'
import { PROJECTED_STREAM_TYPES, PROJECTOR_GROUP } from '@cas/service-projector'
import type { Admin, Kafka } from 'kafkajs'
import { createTestDatabase, type TestDatabase } from '../../support/database.ts'
import { waitFor } from '../../support/wait.ts'
import { createChatbotOverHttp, type HttpChatbot, signUpOverHttp } from './http.ts'
import { type ServiceProcess, serviceProcess, startService } from './processes.ts'
import { installApplyAudit, relayLag } from './read-models.ts'

export interface DeploymentOptions {
  readonly brokers: readonly string[]
  readonly projectors?: number
  readonly partitions?: number
  readonly replicationFactor?: number
  /** Consumer session timeout of the services: how soon a SIGKILLed member's partitions move. */
  readonly sessionTimeoutMs?: number
  /** Extra configuration for every service. */
  readonly env?: Record<string, string>
}

export interface Deployment {
  readonly db: TestDatabase
  readonly env: Record<string, string>
  readonly topicPrefix: string
  readonly gateway: ServiceProcess
  readonly relay: ServiceProcess
  readonly projectors: ServiceProcess[]
  readonly chatbot: HttpChatbot
  /** A Kafka client of the test's own (lag, topic contents, metadata). */
  readonly kafka: Kafka
  readonly admin: Admin
  /** The projector group's Kafka consumer group (prefixed like the topics). */
  readonly projectorKafkaGroup: string
  /** The topics the projector reads (every event topic). */
  readonly topics: string[]
  /** Stops everything (SIGKILL) and drops the database. */
  close(): Promise<void>
}

export async function startDeployment(opts: DeploymentOptions): Promise<Deployment> {
  const db = await createTestDatabase()
  await installApplyAudit(db.pool)
  const topicPrefix = `f${randomBytes(4).toString('hex')}.`
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    DATABASE_POOL_SIZE: '8',
    KAFKA_BROKERS: opts.brokers.join(','),
    KAFKA_TOPIC_PREFIX: topicPrefix,
    KAFKA_PARTITIONS: String(opts.partitions ?? 6),
    KAFKA_REPLICATION_FACTOR: String(opts.replicationFactor ?? 1),
    KAFKA_SESSION_TIMEOUT_MS: String(opts.sessionTimeoutMs ?? 6_000),
    CAPTURE_RATE_LIMIT_PER_MINUTE: '1000000',
    ...opts.env,
  }
  const services: ServiceProcess[] = []
  const kafka = createKafka({ brokers: opts.brokers, clientId: 'fault-test', logLevel: 'nothing' })
  const admin = kafka.admin()
  const close = async () => {
    await Promise.all(services.map((s) => s.kill()))
    await admin.disconnect().catch(() => {})
    await db.drop()
  }
  try {
    // The gateway first: it creates the topics, which the others then find.
    const gateway = await startService('gateway', { env })
    services.push(gateway)
    const relay = await serviceProcess('relay', { env })
    services.push(relay)
    const projectors = await Promise.all(
      Array.from({ length: opts.projectors ?? 1 }, (_, i) =>
        serviceProcess('projector', { env, label: `projector-${i + 1}` }),
      ),
    )
    services.push(...projectors)
    await Promise.all([relay.start(), ...projectors.map((p) => p.start())])
    await admin.connect()
    const account = await signUpOverHttp(gateway.url)
    const chatbot = await createChatbotOverHttp(gateway.url, account.cookie)
    return {
      db,
      env,
      topicPrefix,
      gateway,
      relay,
      projectors,
      chatbot,
      kafka,
      admin,
      projectorKafkaGroup: kafkaGroupId(PROJECTOR_GROUP, topicPrefix),
      topics: STREAM_TYPES.map((t) => topicFor(t, topicPrefix)),
      close,
    }
  } catch (err) {
    await close()
    throw err
  }
}

/** The projector's consumer stats, as its /projector endpoint reports them. */
export async function projectorStats(p: ServiceProcess) {
  return (
    await p.getJson<{ consumer: { partitions: string[]; applied: number; duplicates: number } }>('/projector')
  ).consumer
}

/**
 * Waits until the relay has published every event committed so far, then until the projector group's
 * checkpoints are at the end of every partition.
 */
export async function waitUntilDrained(
  d: Deployment,
  timeouts: { readonly relayMs: number; readonly projectorMs: number },
): Promise<void> {
  await waitFor(async () => (await relayLag(d.db.pool)) === 0, {
    timeoutMs: timeouts.relayMs,
    what: 'the relay to publish everything',
  })
  const eventLog = { kind: 'kafka', kafka: d.kafka, topicPrefix: d.topicPrefix } as const
  await waitFor(
    async () => (await consumerLag(d.db.pool, eventLog, PROJECTOR_GROUP, PROJECTED_STREAM_TYPES)) === 0,
    {
      timeoutMs: timeouts.projectorMs,
      what: 'the projector to consume everything',
    },
  )
}
