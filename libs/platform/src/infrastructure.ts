import path from 'node:path'
import type { InfrastructureConfig, ReadsConfig } from '@cas/config'
import {
  createPool,
  ensureReaderLogin,
  migrate,
  orphanedEmbeddedPostgres,
  publicSchemaOpenToAll,
  startOrUseEmbeddedPostgres,
  stopOrphanedEmbeddedPostgres,
  useRunningEmbeddedPostgres,
} from '@cas/db'
import { createKafka, EMBEDDED_EVENT_LOG, type EventLogBackend, ensureTopics } from '@cas/eventlog'
import type { ReadinessCheck } from '@cas/http'
import { type Keyring, loadKeyring } from '@cas/keyring'
import type { Metrics } from '@cas/metrics'
import type { Admin, Kafka } from 'kafkajs'
import type pg from 'pg'
import type { Logger } from 'pino'

/** The shared infrastructure of a service process, built from its config. */
export interface Infrastructure {
  readonly pool: pg.Pool
  readonly databaseUrl: string
  readonly eventLog: EventLogBackend
  /** Set in Kafka mode. */
  readonly kafka?: Kafka
  readonly readiness: readonly ReadinessCheck[]
  /** Connections as the row-level-security reader role, for services answering dashboard reads. */
  readonly readerPool?: pg.Pool
  /** The master key, for the services that seal or open events' personal data. */
  readonly keyring: Keyring
  /** Closes everything this opened, in reverse order. */
  close(): Promise<void>
  /**
   * Stops the embedded Postgres this process started, or hands it over to another process of ours using
   * it, or (a user of it) leaves it: what close() does last, alone, for a CLI interrupted mid-work. Set
   * only where this process started or uses the embedded server; close() awaits it when under way.
   */
  readonly leaveEmbeddedPostgres?: () => Promise<void>
}

/**
 * Connects to Postgres (starting the embedded server under DATA_DIR when no DATABASE_URL is given),
 * applies pending migrations, and picks the event-log backend: Kafka when KAFKA_BROKERS is set (creating
 * the topics if missing), the journal otherwise.
 */
export async function openInfrastructure(
  config: Omit<InfrastructureConfig, 'PORT' | 'HOST' | 'LOG_LEVEL'> &
    Partial<Pick<ReadsConfig, 'QUERY_DATABASE_URL'>>,
  log: Logger,
  service: string,
  opts: {
    reader?: boolean
    /**
     * Another part of this process (the all-in-one's main thread, for a worker thread) opened the
     * infrastructure already: connect to `config.DATABASE_URL` (the embedded server's, once started)
     * without migrating, creating topics, checking readiness or warning about the master key file again.
     */
    attached?: boolean
  } = {},
): Promise<Infrastructure> {
  const closers: (() => Promise<unknown>)[] = []
  const close = async () => {
    for (const c of closers.splice(0).reverse()) {
      await c().catch((err) => log.warn({ err }, 'error while closing'))
    }
  }
  try {
    let databaseUrl = config.DATABASE_URL
    let leaveEmbeddedPostgres: (() => Promise<void>) | undefined
    const dataDir = path.join(config.DATA_DIR, 'postgres')
    const pgLog = log.child({ component: 'embedded-postgres' })
    if (!databaseUrl && !opts.attached) {
      // A server left running by a process of ours that was killed (SIGKILL) has no one to start it
      // again or stop it: stop it, and start our own below.
      const orphan = orphanedEmbeddedPostgres(dataDir)
      if (orphan) {
        log.warn(
          { dataDir, pid: orphan },
          'the embedded Postgres on DATA_DIR was left running by a process that is gone; stopping it to start our own',
        )
        await stopOrphanedEmbeddedPostgres(orphan)
      }
      // Another process of ours (a CLI, while npm start starts) may have the embedded server up already:
      // used as its registered user, it is handed over to this process rather than stopped when that one
      // leaves first; this process then starts it again if it dies, and stops it (or hands it on) when it
      // leaves.
      const running = await useRunningEmbeddedPostgres(dataDir, {
        log: (line) => pgLog.debug(line),
        alert: (line) => pgLog.warn(line),
      })
      if (running) {
        log.info({ dataDir }, 'using the embedded Postgres already running on DATA_DIR')
        closers.push(() => running.stop())
        leaveEmbeddedPostgres = running.stop
        databaseUrl = running.url
      }
    }
    if (!databaseUrl) {
      log.info({ dataDir }, 'starting embedded Postgres')
      // Another process of ours may start it between the look above and this start (a restart under way
      // by the process using a server whose owner died): that server is used then, not a failure.
      const { server, used } = await startOrUseEmbeddedPostgres({
        dataDir,
        port: config.EMBEDDED_POSTGRES_PORT,
        log: (line) => pgLog.debug(line),
        alert: (line) => pgLog.warn(line),
      })
      if (used)
        log.info({ dataDir }, 'using the embedded Postgres another process started on DATA_DIR meanwhile')
      closers.push(() => server.stop())
      leaveEmbeddedPostgres = server.stop
      databaseUrl = server.url
    }
    const { keyring, source, file } = loadKeyring(config)
    if (source === 'generated') log.warn({ file }, 'generated a new encryption master key; back it up')
    else if (source === 'file' && config.DATABASE_URL && !opts.attached) {
      log.warn(
        { file },
        'using the master key file; set ENCRYPTION_MASTER_KEY so every service has the same one',
      )
    }
    if (!databaseUrl) throw new Error('an attached infrastructure needs DATABASE_URL')
    if (!opts.attached) {
      const applied = await migrate(databaseUrl, { log: (line) => log.debug({ component: 'migrate' }, line) })
      if (applied.length > 0) log.info({ migrations: applied }, 'applied migrations')
      // PostgreSQL 14's default, which migration 0060 could not close (another role owns the schema).
      const openSchema = await publicSchemaOpenToAll(databaseUrl)
      if (openSchema) {
        log.warn(
          openSchema,
          `every role may create objects in schema public (PostgreSQL 14's default), the read-only query login too: its owner, ${openSchema.owner}, should run ${openSchema.statement}`,
        )
      }
    }

    const pool = createPool(databaseUrl, {
      max: config.DATABASE_POOL_SIZE,
      applicationName: service,
      connectionTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    })
    closers.push(() => pool.end())
    const readiness: ReadinessCheck[] = [
      { name: 'database', check: () => pool.query('SELECT 1').then(() => {}) },
    ]
    let readerPool: pg.Pool | undefined
    if (opts.reader) {
      const readerUrl = config.QUERY_DATABASE_URL ?? (await ensureReaderLogin(databaseUrl))
      const reader = createPool(readerUrl, {
        max: config.DATABASE_POOL_SIZE,
        applicationName: `${service}-reader`,
        connectionTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
      })
      closers.push(() => reader.end())
      readerPool = reader
    }

    if (!config.KAFKA_BROKERS) {
      return {
        pool,
        databaseUrl,
        eventLog: EMBEDDED_EVENT_LOG,
        readiness,
        readerPool,
        keyring,
        close,
        leaveEmbeddedPostgres,
      }
    }
    const kafka = createKafka({
      brokers: config.KAFKA_BROKERS,
      clientId: `${config.KAFKA_CLIENT_ID}-${service}`,
      topicPrefix: config.KAFKA_TOPIC_PREFIX,
      log,
    })
    // The admin creates the topics and answers readiness: the part of the process that opened the
    // infrastructure first does both, an attached one neither.
    if (!opts.attached) {
      const admin: Admin = kafka.admin()
      await admin.connect()
      closers.push(() => admin.disconnect())
      await ensureTopics(admin, {
        prefix: config.KAFKA_TOPIC_PREFIX,
        partitions: config.KAFKA_PARTITIONS,
        replicationFactor: config.KAFKA_REPLICATION_FACTOR,
      })
      readiness.push({ name: 'kafka', check: () => admin.describeCluster().then(() => {}) })
    }
    return {
      pool,
      databaseUrl,
      kafka,
      eventLog: {
        kind: 'kafka',
        kafka,
        topicPrefix: config.KAFKA_TOPIC_PREFIX,
        sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      },
      readiness,
      readerPool,
      keyring,
      close,
      leaveEmbeddedPostgres,
    }
  } catch (err) {
    await close()
    throw err
  }
}

/** Reports the infrastructure's connection pools in the process's metrics. */
export function observeInfrastructure(metrics: Metrics, infra: Infrastructure): void {
  metrics.observePool('primary', infra.pool)
  if (infra.readerPool) metrics.observePool('reader', infra.readerPool)
}
