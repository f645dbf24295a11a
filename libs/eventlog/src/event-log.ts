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
