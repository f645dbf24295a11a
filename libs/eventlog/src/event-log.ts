import type { Kafka } from 'kafkajs'
import type { ConsumerOptions, EventConsumer } from './consumer.ts'
import { createJournalConsumer, type JournalConsumerOptions } from './journal-consumer.ts'
import { createKafkaConsumer, type KafkaConsumerOptions } from './kafka-consumer.ts'

/** Where consumers read events from: the Postgres journal itself (embedded default) or Kafka. */
export type EventLogBackend =
  | { readonly kind: 'journal'; readonly partitions?: number; readonly pollIntervalMs?: number }
  | {
      readonly kind: 'kafka'
      readonly kafka: Kafka
      readonly topicPrefix?: string
      /** How long the group waits for a silent member before giving its partitions away (default 30 s). */
      readonly sessionTimeoutMs?: number
    }

/**
 * The event log without Kafka (the embedded default): consumers read the journal, its streams hashed onto
 * four virtual partitions, so that a consumer that may (the projector) applies batches of several
 * partitions at once, using both cores of a small machine instead of one transaction at a time.
 */
export const EMBEDDED_EVENT_LOG = { kind: 'journal', partitions: 4 } as const satisfies EventLogBackend

/** One consumer interface, two backends: the services above the port don't know which one they have. */
export function createEventConsumer(backend: EventLogBackend, opts: ConsumerOptions): EventConsumer {
  switch (backend.kind) {
    case 'journal': {
      const { kind: _kind, ...journalBackend } = backend
      const journalOpts: JournalConsumerOptions = { ...opts, ...journalBackend }
      return createJournalConsumer(journalOpts)
    }
    case 'kafka': {
      const { kind: _kind, ...kafkaBackend } = backend
      const kafkaOpts: KafkaConsumerOptions = { ...opts, ...kafkaBackend }
      return createKafkaConsumer(kafkaOpts)
    }
    default: {
      const unhandled: never = backend
      throw new Error(`unknown event log backend ${JSON.stringify(unhandled)}`)
    }
  }
}
