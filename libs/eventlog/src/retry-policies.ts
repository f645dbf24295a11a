import type { RetryPolicy } from '@cas/db'

/** A consumer's failed batch (or the relay's failed run): looked at again later, less often the longer it fails. */
export const BATCH_RETRY: RetryPolicy = { baseMs: 100, maxMs: 5_000, jitter: 'full' }

/** A batch tried again in the same fetch before its event at fault is looked for (dead-letters.ts). */
export const IN_BATCH_RETRY: RetryPolicy = { baseMs: 50, maxMs: 1_000, jitter: 'full' }

/** The relay's run after a failure (the broker, or the database, is away). */
export const RELAY_RETRY: RetryPolicy = { baseMs: 200, maxMs: 5_000, jitter: 'full' }

/** A Kafka consumer started again after kafkajs stopped it for good (ConsumerLifecycle.restart). */
export const CONSUMER_RESTART: RetryPolicy = { baseMs: 500, maxMs: 10_000, jitter: 'equal' }
