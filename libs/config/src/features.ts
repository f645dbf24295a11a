import { z } from 'zod'
import { group, variable } from './group.ts'
import { commaList, flag, int, postgresUrl } from './infrastructure.ts'

export const sessions = group({
  title: 'Dashboard sessions',
  about: 'The gateway (sign-in) and the query service (reads): the session cookie and who may send it.',
  variables: {
    SESSION_SECRET: variable(z.string().min(32).optional(), {
      absent: 'generated',
      meaning:
        'Signs session cookies (≥ 32 chars); unset: generated once and kept in the database, so sessions survive restarts',
    }),
    SESSION_IDLE_MINUTES: variable(int(1, 525_600).default(60 * 24), {
      meaning: 'A dashboard session unused this long expires (a day)',
    }),
    SESSION_ABSOLUTE_HOURS: variable(int(1, 8_760).default(24 * 14), {
      meaning: 'A session expires this long after sign-in, however active (two weeks)',
    }),
    ALLOWED_ORIGINS: variable(commaList(z.string().url()).default([]), {
      meaning:
        "Extra origins allowed to make mutating dashboard requests (the service's own always is); others get 403",
    }),
  },
})

export const reads = group({
  title: 'Dashboard reads',
  about: 'The query service.',
  variables: {
    QUERY_DATABASE_URL: variable(postgresUrl.optional(), {
      absent: 'derived',
      meaning:
        "The query service's connection, a role confined by row-level security; unset: a `cas_query` role is created through `DATABASE_URL` (which then needs CREATEROLE)",
    }),
    READ_YOUR_WRITES_TIMEOUT_MS: variable(int(0, 30_000).default(2_000), {
      meaning:
        'How long a chatbot or conversation read waits for a command or capture that returned to be projected, before answering with what it has',
    }),
  },
})

export const signIn = group({
  title: 'Sign-in and unauthenticated requests',
  about: 'The gateway.',
  variables: {
    SIGNUP_ENABLED: variable(flag('true'), {
      meaning: '`false` refuses self-service sign-ups (403); invitations still sign invited people up',
    }),
    UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: variable(int(1).default(60), {
      meaning: 'Per client address (IPv6: its /64): captures without a valid key, sign-in, invitation links',
    }),
    REDIS_URL: variable(z.string().url().optional(), {
      meaning: 'Share rate-limit counters between gateway instances; in memory when unset',
    }),
  },
})

export const capture = group({
  title: 'Capture',
  about: 'The gateway: how fast one key may send, and how captures share transactions (group commit).',
  variables: {
    CAPTURE_RATE_LIMIT_PER_MINUTE: variable(int(1).default(6_000), {
      meaning: 'Captures per API key per minute',
    }),
    CAPTURE_MAX_TRANSACTIONS: variable(int(1, 100).default(4), {
      unit: 'transactions',
      meaning:
        'Group commit: capture transactions running at once per gateway process (each holds one pooled connection)',
    }),
    CAPTURE_MAX_GROUP: variable(int(1, 1_000).default(64), {
      unit: 'captures',
      meaning:
        'Group commit: the most concurrent captures one transaction takes; `1` gives every capture its own transaction',
    }),
  },
})

export const invitations = group({
  title: 'Invitations',
  about: 'The gateway: inviting people to an organization.',
  variables: {
    INVITATION_TTL_DAYS: variable(int(1, 365).default(7), {
      meaning: 'How long an invitation to an organization can be accepted',
    }),
    INVITATION_RATE_LIMIT_PER_HOUR: variable(int(1).default(30), {
      meaning: 'Invitations one organization may create per hour (429 after that)',
    }),
    SMTP_URL: variable(
      z
        .string()
        .url()
        .refine((url) => /^smtps?:\/\//.test(url), 'must start with smtp:// or smtps://')
        .optional(),
      {
        meaning:
          '`smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://…:465`: invitations are also emailed through it; unset, the inviter copies the link',
      },
    ),
    SMTP_FROM: variable(z.string().min(3).default('Conversation Analytics <no-reply@localhost>'), {
      meaning: 'The sender of invitation emails',
    }),
  },
})

export const retention = group({
  title: 'Retention',
  about: "The gateway: erasing conversations past their chatbot's `settings.retentionDays`.",
  variables: {
    RETENTION_SWEEP_MINUTES: variable(int(1, 10_080).default(60), {
      meaning: "How often conversations past their chatbot's `settings.retentionDays` are erased",
    }),
  },
})

const LLM_VARIABLES = ['LLM_BASE_URL', 'LLM_API_KEY', 'LLM_MODEL'] as const

export const analysis = group({
  title: 'Analysis',
  about: 'The analysis service: which analyzer, where its model comes from, and how much it does at once.',
  variables: {
    ANALYSIS_PROVIDER: variable(z.enum(['local', 'lexical', 'llm']).default('local'), {
      meaning:
        '`local` (the language model, the lexical analyzer when it cannot be had), `lexical` (no model) or `llm` ([Analysis](analysis.md))',
    }),
    ANALYSIS_MODEL_DIR: variable(z.string().min(1).optional(), {
      meaning:
        "A folder holding `Xenova/all-MiniLM-L6-v2/` in the Hugging Face hub's layout; unset (or without it): downloaded once from the hub into `DATA_DIR/models`",
    }),
    ANALYSIS_MODEL_HUB_URL: variable(z.string().url().default('https://huggingface.co/'), {
      meaning: 'Where the model is downloaded from: the hub or a mirror of it',
    }),
    ANALYSIS_MAX_TOPICS: variable(int(1, 10_000).default(300), {
      unit: 'topics',
      meaning:
        'Topics a chatbot\'s end users\' messages may make at most, besides its own (`settings.topics`); the long tail is "other"',
    }),
    TOPIC_RECLUSTER_WINDOW: variable(int(50, 50_000).default(5_000), {
      unit: 'requests',
      meaning:
        "A chatbot's most recent end-user requests that re-clustering clusters afresh (bounds its time and memory: UMAP + HDBSCAN over 5,000 took 80–130 s on one heavily loaded core, no n × n matrix); older ones keep their topics",
    }),
    TOPIC_RECLUSTER_GROWTH_PERCENT: variable(int(1, 1_000).default(10), {
      unit: '%',
      meaning:
        "A chatbot's topics are re-clustered once its requests have grown by this share of the last run's window (at least 10 requests)",
    }),
    TOPIC_RECLUSTER_MIN_INTERVAL_SECONDS: variable(int(0, 86_400).default(60), {
      meaning: "Floor: a chatbot's topics are re-clustered at most once in this long",
    }),
    TOPIC_RECLUSTER_MAX_INTERVAL_SECONDS: variable(int(1, 86_400).default(180), {
      meaning:
        "Ceiling: a chatbot with requests not yet re-clustered has them re-clustered within this long of the first one's analysis, however few (so its topics settle within it, plus the run's own time, after the analysis has caught up with a burst)",
    }),
    TOPIC_RECLUSTER_TIMEOUT_SECONDS: variable(int(1, 3_600).default(120), {
      meaning: 'A re-clustering run taking longer fails (its thread is stopped) and is retried',
    }),
    TOPIC_RECLUSTER_MAX_ATTEMPTS: variable(int(1, 100).default(3), {
      unit: 'attempts',
      meaning:
        'Attempts of a failing re-clustering (30 s, then 60 s, … apart) before it waits for the ceiling interval and starts over; analysis goes on meanwhile',
    }),
    LLM_BASE_URL: variable(z.string().url().optional(), {
      meaning:
        'The OpenAI-compatible endpoint, e.g. `https://api.openai.com/v1` (required with `ANALYSIS_PROVIDER=llm`)',
    }),
    LLM_API_KEY: variable(z.string().min(1).optional(), {
      meaning: "The endpoint's key (required with `ANALYSIS_PROVIDER=llm`)",
    }),
    LLM_MODEL: variable(z.string().min(1).optional(), {
      meaning: 'The model to ask (required with `ANALYSIS_PROVIDER=llm`)',
    }),
    LLM_TIMEOUT_MS: variable(int(100, 600_000).default(30_000), {
      meaning: 'Timeout of one LLM call',
    }),
    LLM_CONCURRENCY: variable(int(1, 256).default(4), {
      unit: 'calls',
      meaning: 'LLM calls in flight per analysis process',
    }),
    SIGNALS_LLM_REFINE: variable(z.enum(['off', 'borderline']).default('off'), {
      meaning:
        '`borderline`: the LLM (`LLM_*` then required) confirms or rejects borderline signals, never adds one; on failure the local result stands ([Analysis](analysis.md#llm-refinement-of-borderline-signals)). `off`: local only',
    }),
    ANALYSIS_CONCURRENCY: variable(int(1, 256).default(64), {
      unit: 'jobs',
      meaning:
        'Jobs analyzed at once per analysis process (their results commit together, while the next ones are analysed: as many again may wait for their commit; while jobs are being analysed, the next claim waits for a quarter of the slots)',
    }),
    ANALYSIS_THREADS: variable(int(0, 64).default(1), {
      unit: 'threads',
      meaning:
        'Worker threads the local analyzer (model or lexicon) runs in, per analysis process (one core each); `0` runs it in the main thread',
    }),
    ANALYSIS_THREAD_NICE: variable(int(0, 19).default(10), {
      meaning:
        "The analyzer threads' niceness on Linux (0–19; `0`: the process's priority): analysis is background work, so under load the cores answer captures and project first",
    }),
    ANALYSIS_MAX_ATTEMPTS: variable(int(1, 100).default(5), {
      unit: 'attempts',
      meaning: 'Attempts before a job is dead-lettered with an `analysis.failed` event',
    }),
    ANALYSIS_MAX_PENDING: variable(int(1).default(10_000), {
      unit: 'jobs',
      meaning:
        'Queued jobs at which the analysis consumer pauses (the backlog stays in the event log, not in memory; `cas_consumer_paused` says so) until the analyzer has worked some off; each process may pass it by one batch',
    }),
  },
  check: (values) => [
    ...(values.ANALYSIS_PROVIDER === 'llm'
      ? LLM_VARIABLES.filter((name) => !values[name]).map(
          (name) => `${name}: required when ANALYSIS_PROVIDER=llm`,
        )
      : []),
    ...(values.SIGNALS_LLM_REFINE === 'borderline' && values.ANALYSIS_PROVIDER !== 'llm'
      ? LLM_VARIABLES.filter((name) => !values[name]).map(
          (name) => `${name}: required when SIGNALS_LLM_REFINE=borderline`,
        )
      : []),
  ],
})
