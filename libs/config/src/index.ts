import path from 'node:path'
import { z } from 'zod'

const commaList = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().regex(/^[^:\s]+:\d+$/, 'host:port')).min(1))

const port = z.coerce.number().int().min(0).max(65_535)

/**
 * Every setting the services read, parsed once from the environment in a service's main.ts
 * (nothing reads process.env anywhere else). The README's configuration table mirrors this.
 */
export const configSchema = z.object({
  PORT: port.default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Embedded mode keeps its Postgres cluster under DATA_DIR/postgres. */
  DATA_DIR: z.string().min(1).default('.data'),
  /** Any Postgres 14+; when unset the embedded server is started. */
  DATABASE_URL: z.string().url().optional(),
  /**
   * The query service's connection: a role that can read the read models only through row-level
   * security (member of cas_reader; not their owner, not superuser, not BYPASSRLS). When unset, a role
   * `cas_query` is created through DATABASE_URL (which then needs CREATEROLE).
   */
  QUERY_DATABASE_URL: z.string().url().optional(),
  /** Port of the embedded Postgres server; 0 picks a free one at each start. */
  EMBEDDED_POSTGRES_PORT: port.default(0),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(20),
  /**
   * How long a request waits for a Postgres connection (a free pooled one, or a new one) before it is
   * answered 503: bounds every wait when the database is down or the pool is exhausted.
   */
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5_000),
  /** Mean event-loop delay (ms, over 0.5 s) above which the HTTP services shed requests with 503; 0 never. */
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(1_000),
  /**
   * Requests already waiting for a Postgres connection (with every connection busy) at which the HTTP
   * services shed new requests with 503 instead of queueing them; 0 never.
   */
  OVERLOAD_MAX_POOL_WAITING: z.coerce.number().int().min(0).max(100_000).default(50),
  /** Kafka bootstrap servers (host:port, comma-separated); when unset consumers read the journal. */
  KAFKA_BROKERS: commaList.optional(),
  KAFKA_TOPIC_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._-]*$/)
    .default(''),
  KAFKA_PARTITIONS: z.coerce.number().int().min(1).max(10_000).default(12),
  KAFKA_REPLICATION_FACTOR: z.coerce.number().int().min(1).max(7).default(1),
  KAFKA_CLIENT_ID: z.string().min(1).default('conversation-analytics'),
  /**
   * How long a consumer group waits for a member that stopped heart-beating (a crashed process) before
   * giving its partitions to the others. Brokers accept 6 s to 5 min by default.
   */
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(30_000),
  /** Journal events the relay reads and publishes per batch. */
  RELAY_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(500),
  /**
   * Batches the relay has published and Kafka not yet acknowledged, at most: it reads ahead and sends
   * while earlier batches wait for their acks (1: one batch at a time).
   */
  RELAY_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(64).default(4),

  /**
   * Master key wrapping the per-chatbot data keys that encrypt personal data in events: 32 bytes, base64
   * (`openssl rand -base64 32`). When unset, DATA_DIR/master.key is used, generated on first start.
   * Every service of a deployment needs the same one.
   */
  ENCRYPTION_MASTER_KEY: z
    .string()
    .regex(/^[A-Za-z0-9+/_-]{43}=?$/, 'must be 32 bytes in base64, e.g. from `openssl rand -base64 32`')
    .optional(),
  /** Signs session cookies; at least 32 characters. When unset one is generated once and kept in the database. */
  SESSION_SECRET: z.string().min(32).optional(),
  /** A session unused this long expires. */
  SESSION_IDLE_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(525_600)
    .default(60 * 24),
  /** A session expires this long after sign-in, however active. */
  SESSION_ABSOLUTE_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(8_760)
    .default(24 * 14),
  SIGNUP_ENABLED: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /** Origins allowed to make mutating dashboard requests (comma-separated); the service's own origin always is. */
  ALLOWED_ORIGINS: z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().url()))
    .default([]),
  /** Trust X-Forwarded-* from a reverse proxy (needed for Secure cookies and client addresses behind TLS). */
  TRUST_PROXY: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** How long a conversation read waits for the read model to catch up with a write that returned. */
  READ_YOUR_WRITES_TIMEOUT_MS: z.coerce.number().int().min(0).max(30_000).default(2_000),
  CAPTURE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(6_000),
  /** Group commit: capture transactions running at once, per gateway process (each holds a connection). */
  CAPTURE_MAX_TRANSACTIONS: z.coerce.number().int().min(1).max(100).default(4),
  /** Group commit: the most concurrent captures that share one transaction (1 turns grouping off). */
  CAPTURE_MAX_GROUP: z.coerce.number().int().min(1).max(1_000).default(64),
  /** Requests per minute per client address for requests without a valid API key, and for sign-in. */
  UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /**
   * Which analyzer scores messages: `local`, the local language model (sentence embeddings, topic
   * discovery; the lexical analyzer when the model cannot be had), `lexical` (VADER and key phrases
   * only), or `llm` (an OpenAI-compatible LLM).
   */
  ANALYSIS_PROVIDER: z.enum(['local', 'lexical', 'llm']).default('local'),
  /**
   * A folder holding the language model (Xenova/all-MiniLM-L6-v2) in the Hugging Face hub's layout. When
   * unset (or without the model), it is downloaded from ANALYSIS_MODEL_HUB_URL once and kept in DATA_DIR/models.
   */
  ANALYSIS_MODEL_DIR: z.string().min(1).optional(),
  /** Where the model is downloaded from when no folder has it: the Hugging Face hub, or a mirror of it. */
  ANALYSIS_MODEL_HUB_URL: z.string().url().default('https://huggingface.co/'),
  /** Topics a chatbot's end users' messages may make at most (besides its own, settings.topics); the rest are "other". */
  ANALYSIS_MAX_TOPICS: z.coerce.number().int().min(1).max(10_000).default(300),
  /** OpenAI-compatible API base URL, e.g. https://api.openai.com/v1 (ANALYSIS_PROVIDER=llm). */
  LLM_BASE_URL: z.string().url().optional(),
  LLM_API_KEY: z.string().min(1).optional(),
  LLM_MODEL: z.string().min(1).optional(),
  LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** Most LLM calls in flight at once, per analysis process. */
  LLM_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /** Attempts per analysis job before it is dead-lettered (with an analysis.failed event). */
  ANALYSIS_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(5),
  /**
   * The analyzer threads' niceness on Linux (0–19; 0: the process's own priority). Analysis is background
   * work: at 10, under load the cores answer captures and project first, and analysis trails and catches up.
   */
  ANALYSIS_THREAD_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /** Worker threads running the local analyzer (model or lexicon), per analysis process; 0: the main thread. */
  ANALYSIS_THREADS: z.coerce.number().int().min(0).max(64).default(1),
  /**
   * Jobs analyzed at once per analysis process: the model embeds them in one batch and their results
   * commit together (64 keeps up with 300+ end-user messages/s on one core; bench/FINDINGS.md "Topics").
   */
  ANALYSIS_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(64),
  /**
   * Queued jobs above which the analysis consumer stops taking events: the backlog then waits in Kafka
   * (or the journal), not in memory or an ever-growing queue.
   */
  ANALYSIS_MAX_PENDING: z.coerce.number().int().min(1).default(10_000),
  /** How often the gateway erases conversations past their chatbot's settings.retentionDays. */
  RETENTION_SWEEP_MINUTES: z.coerce.number().int().min(1).max(10_080).default(60),
  /** How long an invitation to an organization can be accepted. */
  INVITATION_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(7),
  /** Invitations an organization may create per hour (a 429 after that). */
  INVITATION_RATE_LIMIT_PER_HOUR: z.coerce.number().int().min(1).default(30),
  /**
   * Where invitation emails are sent through: `smtp://user:pass@host:587` (STARTTLS when the server offers
   * it) or `smtps://…:465`. When unset no email is sent: the inviter copies the link.
   */
  SMTP_URL: z
    .string()
    .url()
    .refine((url) => /^smtps?:\/\//.test(url), 'must start with smtp:// or smtps://')
    .optional(),
  /** The sender of invitation emails. */
  SMTP_FROM: z.string().min(3).default('Conversation Analytics <no-reply@localhost>'),
  /** Shares rate-limit counters between gateway instances; in memory when unset. */
  REDIS_URL: z.string().url().optional(),
})

export type Config = z.infer<typeof configSchema>

/** Settings that only make sense together. */
function checkCombinations(config: Config): string[] {
  if (config.ANALYSIS_PROVIDER !== 'llm') return []
  return (['LLM_BASE_URL', 'LLM_API_KEY', 'LLM_MODEL'] as const)
    .filter((name) => !config[name])
    .map((name) => `${name}: required when ANALYSIS_PROVIDER=llm`)
}

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n  ${issues.join('\n  ')}`)
    this.name = 'ConfigError'
  }
}

/** Parses the environment (empty strings count as unset), throwing a ConfigError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''))
  const parsed = configSchema.safeParse(present)
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`))
  }
  const problems = checkCombinations(parsed.data)
  if (problems.length > 0) throw new ConfigError(problems)
  return { ...parsed.data, DATA_DIR: path.resolve(parsed.data.DATA_DIR) }
}
