import { defaultsOf, eventLog } from '@cas/config'
import { type RetryPolicy, retry } from '@cas/db'
import {
  type Admin,
  type ICustomPartitioner,
  Kafka,
  type KafkaConfig,
  logLevel,
  Partitioners,
  type Producer,
  type RecordMetadata,
  type TopicMessages,
} from 'kafkajs'
import { drop, ok, type StepResult } from './consumer-pipeline.ts'
import type { RawJournalRecord } from './journal-reader.ts'
import { type KafkaLogTarget, kafkaLogCreator } from './kafka-log.ts'
import type { JournalRecord, StreamType } from './records.ts'
import { STREAM_TYPES, streamTypeOfTopic, topicFor } from './topics.ts'

export interface KafkaSettings {
  readonly brokers: readonly string[]
  readonly clientId?: string
  /** Prepended to every topic name, to separate environments (or tests) sharing a cluster. */
  readonly topicPrefix?: string
  readonly logLevel?: 'nothing' | 'error' | 'warn' | 'info' | 'debug'
  /** The process's logger, for kafkajs's lines (kafka-log.ts); kafkajs's own JSON on the console without it. */
  readonly log?: KafkaLogTarget
}

export function createKafka(settings: KafkaSettings): Kafka {
  const config: KafkaConfig = {
    brokers: [...settings.brokers],
    clientId: settings.clientId ?? 'conversation-analytics',
    logLevel: logLevel[(settings.logLevel ?? 'error').toUpperCase() as keyof typeof logLevel],
    retry: { initialRetryTime: 100, retries: 8 },
    ...(settings.log ? { logCreator: kafkaLogCreator(settings.log) } : {}),
  }
  return new Kafka(config)
}

/**
 * The relay's producer: acks=all (set per send) makes an acknowledged batch durable, and consumers drop
 * the duplicates a retry can cause by streamId/streamVersion.
 *
 * Not kafkajs' idempotent producer: it holds a lock per broker for the whole of each produce request
 * (one request in flight per broker, whatever `maxInFlightRequests` says), and it can lose messages under
 * concurrent sends (kafkajs issue #1005). Each stream's order is kept by the relay instead: concurrent
 * sends never carry events of the same stream (see `sendLane`), so a request kafkajs retries cannot
 * overtake an earlier one of its stream. `maxInFlight` is how many sends the relay makes at once.
 */
export function createRelayProducer(kafka: Kafka, opts: { maxInFlight?: number } = {}): Producer {
  return kafka.producer({
    idempotent: false,
    maxInFlightRequests: opts.maxInFlight ?? 1,
    allowAutoTopicCreation: false,
    createPartitioner: KeyPartitioner,
    // Never retry within a send: `sendEvery` retries whole sends instead (see there why).
    retry: { retries: 0 },
  })
}

/** How `sendEvery` retries: 100 ms doubling up to 5 s, about 26 s in all, as long as kafkajs' own retries took. */
export const SEND_RETRY: RetryPolicy = { baseMs: 100, maxMs: 5_000, jitter: 'none', retries: 10 }

/**
 * Sends every message with acks=all, or throws. Each attempt is a new `sendBatch` of all of them, so a
 * retried send carries again what a broker had already taken (duplicates, which consumers drop by
 * streamId/streamVersion), never less.
 *
 * Why not kafkajs' own retries: within one send, kafkajs (2.2.4, producer/sendMessages.js) keeps the
 * response of each broker that answered and retries only towards brokers without one. When a broker dies
 * mid-send and its partitions' new leader is a broker that had answered, the messages of those partitions
 * are never sent again, and the send resolves as if they had been: acknowledged events were missing from
 * the topics after a leader was killed (fault 6; test/faults/leader-failover.fault.test.ts shows it).
 */
export async function sendEvery(
  producer: Producer,
  topicMessages: TopicMessages[],
  policy: RetryPolicy = SEND_RETRY,
): Promise<RecordMetadata[]> {
  return retry(policy, () => producer.sendBatch({ acks: -1, topicMessages }), {
    retryable: isRetriableSendError,
  })
}

/** kafkajs wraps a retriable error in KafkaJSNumberOfRetriesExceeded once its retries (none) are spent. */
function isRetriableSendError(err: unknown): boolean {
  const e = err as { name?: string; retriable?: boolean }
  return e.name === 'KafkaJSNumberOfRetriesExceeded' || e.retriable === true
}

/**
 * kafkajs' DefaultPartitioner (Kafka's Java client's: murmur2 of the key), the same partition for every
 * key, with a murmur2 on 32-bit integers: kafkajs' own, on 64-bit Long objects, costs about 20 µs a key,
 * which at 10,000 events/s is a fifth of a core. Messages without a key go to kafkajs' own.
 */
export const KeyPartitioner: ICustomPartitioner = () => {
  const fallback = Partitioners.DefaultPartitioner()
  return (args) => {
    const { message, partitionMetadata } = args
    if (message.partition !== null && message.partition !== undefined) return message.partition
    if (message.key === null || message.key === undefined) return fallback(args)
    return (murmur2(message.key) & 0x7fffffff) % partitionMetadata.length
  }
}

/** Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2) of the key's UTF-8 bytes. */
export function murmur2(key: string | Buffer): number {
  const data = typeof key === 'string' ? Buffer.from(key) : key
  const length = data.length
  const m = 0x5bd1e995
  let h = 0x9747b28c ^ length
  const length4 = length >>> 2
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24)
    k = Math.imul(k, m)
    k ^= k >>> 24
    k = Math.imul(k, m)
    h = Math.imul(h, m) ^ k
  }
  // The one to three last bytes.
  const tail = length & ~3
  const rest = length & 3
  if (rest === 3) h ^= data[tail + 2]! << 16
  if (rest >= 2) h ^= data[tail + 1]! << 8
  if (rest >= 1) h = Math.imul(h ^ data[tail]!, m)
  h ^= h >>> 13
  h = Math.imul(h, m)
  h ^= h >>> 15
  return h | 0
}

/**
 * Which of `lanes` concurrent senders carries the events of stream `key`: the producer's partition hash
 * modulo `lanes`. A stream always gets the same lane, and when the partition count is a multiple of
 * `lanes`, a partition too (partition p → lane p mod lanes), so that concurrent requests then never
 * write to the same partition.
 */
export function sendLane(key: string, lanes: number): number {
  return lanes <= 1 ? 0 : (murmur2(key) & 0x7fffffff) % lanes
}

/** Creates the three event topics when missing, and waits until every partition has a leader serving it. */
export async function ensureTopics(
  admin: Admin,
  opts: {
    prefix?: string
    partitions?: number
    replicationFactor?: number
    streamTypes?: readonly StreamType[]
  },
): Promise<void> {
  const wanted = (opts.streamTypes ?? STREAM_TYPES).map((t) => topicFor(t, opts.prefix))
  const existing = new Set(await admin.listTopics())
  const missing = wanted.filter((t) => !existing.has(t))
  if (missing.length > 0) {
    const replicationFactor = opts.replicationFactor ?? defaultsOf(eventLog).KAFKA_REPLICATION_FACTOR
    await admin.createTopics({
      // kafkajs' wait gives up on UNKNOWN_TOPIC_OR_PARTITION; waitForTopicLeaders below does not.
      waitForLeaders: false,
      topics: missing.map((topic) => ({
        topic,
        numPartitions: opts.partitions ?? defaultsOf(eventLog).KAFKA_PARTITIONS,
        replicationFactor,
        // The relay sends with acks=all, which waits only for the in-sync replicas: with three or more
        // copies, an acknowledged batch must be on two of them, so losing one broker loses nothing
        // acknowledged. (With fewer copies the broker's own default applies.)
        ...(replicationFactor >= 3 ? { configEntries: [{ name: 'min.insync.replicas', value: '2' }] } : {}),
      })),
    })
  }
  await waitForTopicLeaders(admin, wanted)
}

/**
 * Waits until every partition of the topics has a leader that serves it. kafkajs' own `waitForLeaders`
 * retries only on LEADER_NOT_AVAILABLE, but a KRaft broker answers UNKNOWN_TOPIC_OR_PARTITION until its
 * metadata cache has the new topic, which made topic creation fail now and then under load.
 *
 * A leader in the metadata is not enough: a KRaft broker publishes a new topic's leaders in its metadata
 * before its replica manager hosts the partitions, and for a moment answers a produce to some of them
 * NOT_LEADER_OR_FOLLOWER. The relay's first send to new topics then failed in part, and `sendEvery`
 * sent it again whole: the partitions that had taken it held two copies (28 of 30 fresh topics of 12
 * partitions, 48 events sent at once, on one local broker). So the wait also asks each partition's
 * leader for its offsets (ListOffsets, answered only by a leader hosting the partition, as a produce is),
 * until every partition answers.
 */
export async function waitForTopicLeaders(admin: Admin, topics: readonly string[], timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics: [...topics] })
      const ready =
        metadata.length === topics.length &&
        metadata.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))
      if (ready) {
        for (const topic of topics) await admin.fetchTopicOffsets(topic)
        return
      }
    } catch (err) {
      if (!NOT_YET.has(protocolErrorType(err) ?? '')) throw err
    }
    if (Date.now() > deadline)
      throw new Error(`topics ${topics.join(', ')} have no leader after ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** What a broker answers about a partition it does not serve yet. */
const NOT_YET = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_FOR_PARTITION'])

/** The Kafka protocol error's type, also when kafkajs wrapped it once its own retries were spent. */
function protocolErrorType(err: unknown): string | undefined {
  const e = err as { type?: string; cause?: { type?: string }; originalError?: { type?: string } }
  return e.type ?? e.cause?.type ?? e.originalError?.type
}

/** The Kafka message value: the EVENTS.md envelope (the stream type is the topic). */
export function encodeRecord(r: JournalRecord): string {
  return JSON.stringify({
    id: r.id,
    type: r.type,
    version: r.version,
    occurredAt: r.occurredAt,
    orgId: r.orgId,
    chatbotId: r.chatbotId,
    streamId: r.streamId,
    streamVersion: r.streamVersion,
    position: r.position,
    metadata: r.metadata,
    payload: r.payload,
  })
}

/**
 * `encodeRecord` of a record read with its payload and metadata as JSON text: the same envelope, the same
 * values, without parsing the payload and serialising it again (Postgres' JSON text has a space after
 * each colon and comma).
 */
export function encodeRawRecord(r: RawJournalRecord): string {
  return `${rawEnvelope(r)}"payload":${r.payloadJson}}`
}

/** The envelope's fields but the payload, as encodeRecord writes them, up to the comma before it. */
function rawEnvelope(r: RawJournalRecord): string {
  const s = JSON.stringify
  return (
    `{"id":${s(r.id)},"type":${s(r.type)},"version":${r.version},"occurredAt":${s(r.occurredAt)},` +
    `"orgId":${s(r.orgId)},"chatbotId":${s(r.chatbotId)},"streamId":${s(r.streamId)},` +
    `"streamVersion":${r.streamVersion},"position":${s(r.position)},"metadata":${r.metadataJson},`
  )
}

/**
 * The envelope of an event Kafka refused as a record (too large for the topic): every field but the
 * payload, which stays in the journal, and `"payloadRef": "journal"` saying where to read it (by the
 * event's id). The relay publishes an event so only after Kafka refused it again and again (relay.ts),
 * and the service's consumers read the payload back from the journal (kafka-consumer.ts).
 */
export function encodeRawReference(r: RawJournalRecord): string {
  return `${rawEnvelope(r)}"payload":null,"payloadRef":"journal"}`
}

/**
 * Whether Kafka refused a record as such (too large, invalid): sending it again the same way fails the
 * same way, whatever the cluster does meanwhile, until an operator changes the topic's limits.
 */
export function refusesRecord(err: unknown): boolean {
  const types = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE'])
  const e = err as { type?: string; message?: string; errors?: unknown[]; originalError?: unknown }
  if (!e || typeof e !== 'object') return false
  if (e.type && types.has(e.type)) return true
  if (/larger than the max message size|MESSAGE_TOO_LARGE/i.test(e.message ?? '')) return true
  return (e.errors ?? []).some(refusesRecord) || (e.originalError ? refusesRecord(e.originalError) : false)
}

/**
 * The Kafka consumer's decode step (consumer-pipeline.ts): the record, or a drop as `undecodable` with
 * why in its detail.
 */
export function decodeMessage(
  topic: string,
  value: Buffer | null,
  prefix = '',
): StepResult<{ record: JournalRecord; byReference?: true }> {
  const decoded = decodeRecord(topic, value, prefix)
  if (!decoded.ok) return drop('undecodable', decoded.reason)
  return ok(decoded.byReference ? { record: decoded.record, byReference: true } : { record: decoded.record })
}

/** Reads a message value back into a record, or explains why it can't. */
export function decodeRecord(
  topic: string,
  value: Buffer | null,
  prefix = '',
): { ok: true; record: JournalRecord; byReference?: true } | { ok: false; reason: string } {
  const streamType = streamTypeOfTopic(topic, prefix)
  if (!streamType) return { ok: false, reason: `unknown topic ${topic}` }
  if (!value) return { ok: false, reason: 'empty message' }
  let raw: unknown
  try {
    raw = JSON.parse(value.toString('utf8'))
  } catch {
    return { ok: false, reason: 'value is not JSON' }
  }
  const e = raw as Partial<Record<keyof JournalRecord, unknown>>
  if (
    typeof e.id !== 'string' ||
    typeof e.type !== 'string' ||
    typeof e.streamId !== 'string' ||
    typeof e.streamVersion !== 'number' ||
    typeof e.position !== 'string'
  ) {
    return { ok: false, reason: 'not an event envelope' }
  }
  if ((raw as { payloadRef?: unknown }).payloadRef === 'journal') {
    const { payloadRef: _ref, ...envelope } = raw as JournalRecord & { payloadRef: string }
    return { ok: true, record: { ...envelope, streamType }, byReference: true }
  }
  return { ok: true, record: { ...(raw as JournalRecord), streamType } }
}
