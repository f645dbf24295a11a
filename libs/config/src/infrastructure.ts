import path from 'node:path'
import { z } from 'zod'
import { group, variable } from './group.ts'

const int = (min: number, max: number = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max)
const port = int(0, 65_535)
const flag = (fallback: 'true' | 'false') =>
  z
    .enum(['true', 'false'])
    .default(fallback)
    .transform((v) => v === 'true')

/** A comma-separated list, each item checked by `item`. */
export const commaList = (item: z.ZodString) =>
  z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item))

/**
 * A PostgreSQL connection URL. libpq's Unix-socket form without a host
 * (`postgres://user:pw@/db?host=/var/run/postgresql`) is read as `localhost` with the socket directory in
 * `host=`, which is what pg makes of it: the URL parser (WHATWG, as `new URL` everywhere) refuses an empty
 * host after credentials.
 */
export const postgresUrl = z
  .string()
  .transform((url) => url.replace(/^(postgres(?:ql)?:\/\/(?:[^@/?#]*@)?)(?=[:/?#]|$)/i, '$1localhost'))
  .pipe(z.string().url())

export const server = group({
  title: 'Process',
  about: 'Every process: where it listens and how much it logs.',
  variables: {
    PORT: variable(port.default(3000), { meaning: 'HTTP port' }),
    HOST: variable(z.string().min(1).default('127.0.0.1'), {
      meaning: 'Interface to listen on (`0.0.0.0` in containers)',
    }),
    LOG_LEVEL: variable(
      z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      {
        meaning: '`fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`; logs are JSON (pino)',
      },
    ),
  },
})

export const database = group({
  title: 'Database',
  about: 'Every process: the Postgres it stores in (and, unset, the embedded server it starts).',
  variables: {
    DATA_DIR: variable(
      z
        .string()
        .min(1)
        .default('.data')
        .transform((dir) => path.resolve(dir)),
      {
        meaning:
          'Embedded mode keeps its Postgres cluster in `DATA_DIR/postgres`; also where the generated master key and the downloaded model are kept',
      },
    ),
    DATA_DIR_FALLBACK: variable(
      z
        .string()
        .min(1)
        .default('/var/lib/conversation-analytics')
        .transform((dir) => path.resolve(dir)),
      {
        meaning:
          "As root with `DATA_DIR` unset and the checkout's `.data` out of the `postgres` user's reach (a checkout under `/root`): `DATA_DIR` is `DATA_DIR_FALLBACK/<checkout name>-<hash of its path>` instead, created mode 711, and the log says so",
      },
    ),
    DATABASE_URL: variable(postgresUrl.optional(), {
      meaning:
        'Any PostgreSQL 14+ (on 14 the schema `public` must not let every role create: see operations.md); unset starts the embedded server. A Unix socket: `postgres://user:pw@/db?host=/var/run/postgresql`',
    }),
    EMBEDDED_POSTGRES_PORT: variable(port.default(0), {
      meaning: 'Port of the embedded server; `0` picks a free one',
    }),
    DATABASE_POOL_SIZE: variable(int(1, 500).default(20), {
      unit: 'connections',
      meaning:
        "Connections per pool: a process has one, the query service and the all-in-one two (their reads through the reader role); the all-in-one's projector thread has 6 of its own besides",
    }),
    DATABASE_CONNECT_TIMEOUT_MS: variable(int(100, 120_000).default(5_000), {
      meaning:
        'How long a request waits for a Postgres connection (free or new) before it is answered 503: bounds every wait while the database is down or the pool exhausted',
    }),
  },
})

export const encryption = group({
  title: 'Encryption',
  about: 'Every process: the key that seals personal data in events.',
  variables: {
    ENCRYPTION_MASTER_KEY: variable(
      z
        .string()
        .regex(/^[A-Za-z0-9+/_-]{43}=?$/, 'must be 32 bytes in base64, e.g. from `openssl rand -base64 32`')
        .optional(),
      {
        absent: '`DATA_DIR/master.key`',
        meaning:
          '32 bytes, base64 (`openssl rand -base64 32`): wraps the per-chatbot keys sealing personal data in events. Every service needs the same one; losing it loses the sealed data',
      },
    ),
  },
})

export const eventLog = group({
  title: 'Event log',
  about: 'Every process: Kafka, or (unset) the Postgres journal.',
  variables: {
    KAFKA_BROKERS: variable(
      commaList(z.string().regex(/^[^:\s]+:\d+$/, 'host:port'))
        .pipe(z.array(z.string()).min(1))
        .optional(),
      {
        meaning: '`host:port,…`; unset uses the Postgres journal as the event log',
      },
    ),
    KAFKA_SESSION_TIMEOUT_MS: variable(int(1_000, 3_600_000).default(30_000), {
      meaning:
        'How long a consumer group waits for a silent member (a crashed process) before its partitions move; brokers accept 6 s to 5 min by default',
    }),
    KAFKA_TOPIC_PREFIX: variable(
      z
        .string()
        .regex(/^[A-Za-z0-9._-]*$/)
        .default(''),
      { meaning: 'Prepended to topic names, to share a cluster between environments' },
    ),
    KAFKA_PARTITIONS: variable(int(1, 10_000).default(12), {
      unit: 'partitions',
      meaning:
        'Partitions of topics the service creates: the most consumer processes of a group that share the work',
    }),
    KAFKA_REPLICATION_FACTOR: variable(int(1, 7).default(1), {
      unit: 'copies',
      meaning:
        'Replication of topics the service creates (one broker by default; 3 or more sets `min.insync.replicas=2`)',
    }),
    KAFKA_CLIENT_ID: variable(z.string().min(1).default('conversation-analytics'), {
      meaning: 'Kafka client id prefix',
    }),
  },
})

export const relay = group({
  title: 'Relay',
  about: 'The relay (journal → Kafka; in the all-in-one with Kafka).',
  variables: {
    RELAY_BATCH_SIZE: variable(int(1, 100_000).default(500), {
      unit: 'events',
      meaning: 'Journal events the relay reads and publishes per batch',
    }),
    RELAY_MAX_IN_FLIGHT: variable(int(1, 64).default(4), {
      unit: 'batches',
      meaning:
        'Batches the relay has published and Kafka not yet acknowledged, at most: it reads ahead while earlier ones wait for their acks (`1`: one at a time)',
    }),
  },
})

export const http = group({
  title: 'HTTP',
  about: 'The gateway and the query service: proxies and shedding load.',
  variables: {
    TRUST_PROXY: variable(flag('false'), {
      meaning: 'Trust `X-Forwarded-*` from a reverse proxy (Secure cookies and client addresses behind TLS)',
    }),
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: variable(int(0, 60_000).default(1_000), {
      meaning:
        'Mean event-loop delay (over 0.5 s) above which the gateway and query service shed requests with 503; `0` never',
    }),
    OVERLOAD_MAX_POOL_WAITING: variable(int(0, 100_000).default(50), {
      unit: 'queries',
      meaning:
        'With every Postgres connection busy, queries waiting at which new requests are shed with 503 instead of queueing; `0` never',
    }),
  },
})

export { flag, int }
