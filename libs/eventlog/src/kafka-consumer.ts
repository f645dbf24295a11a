import { defaultsOf, eventLog } from '@cas/config'
import { delay, retryDelayMs } from '@cas/db'
import type { Admin, Consumer, EachBatchPayload, Kafka, Producer } from 'kafkajs'
import type { Pool } from 'pg'
import { applyBatches, type BatchPart, type SourcedRecord } from './apply-batch.ts'
import type { ConsumerOptions, EventConsumer, PartitionLag } from './consumer.ts'
import { ConsumerLifecycle, newConsumerStats, recordOutcome } from './consumer.ts'
import { assertNever, DeadLetterError } from './consumer-pipeline.ts'
import {
  applyIsolated,
  DEFAULT_MAX_ATTEMPTS,
  type DeadLetterSink,
  isTransientError,
  startConsumerRedrive,
} from './dead-letters.ts'
import { decodeMessage, decodeRecord, encodeRecord, waitForTopicLeaders } from './kafka.ts'
import { BATCH_RETRY, CONSUMER_RESTART, IN_BATCH_RETRY } from './retry-policies.ts'
import { topicFor } from './topics.ts'
import { TrailingOrder } from './trailing.ts'

export interface KafkaConsumerOptions extends ConsumerOptions {
  readonly kafka: Kafka
  readonly topicPrefix?: string
  readonly sessionTimeoutMs?: number
}

/**
 * A Kafka consumer-group member whose offsets live in Postgres, next to the effects of the batches they
 * cover (apply-batch.ts). Kafka's own committed offsets are never written, which sidesteps the kafkajs
 * pitfalls around committing after a rebalance (issues #1046, #1097, #447): on every assignment each
 * partition is sought to the offset after its Postgres checkpoint, and whatever arrives at or below the
 * checkpoint anyway (a fetch that raced the seek, a zombie's batch) is skipped inside the transaction.
 * Long batches are applied in chunks with a heartbeat after each, and a chunk is not started once the
 * batch is stale (its partition was revoked) or the consumer is stopping.
 */
export function createKafkaConsumer(opts: KafkaConsumerOptions): EventConsumer {
  const stats = newConsumerStats(opts.droppedEvents)
  const topics = opts.streamTypes.map((t) => topicFor(t, opts.topicPrefix))
  const log = opts.log ?? (() => {})
  const chunkSize = opts.maxBatchSize ?? 500
  const sessionTimeoutMs = opts.sessionTimeoutMs ?? defaultsOf(eventLog).KAFKA_SESSION_TIMEOUT_MS
  let consumer: Consumer | undefined
  let admin: Promise<Admin> | undefined
  // Off when the topics turn out not to be co-partitioned (checked at start).
  let trailing =
    opts.trailing &&
    new TrailingOrder(
      topicFor(opts.trailing.leader, opts.topicPrefix),
      topicFor(opts.trailing.streamType, opts.topicPrefix),
      opts.trailing.maxHoldMs,
    )

  let trailingReady: Promise<void> = Promise.resolve()

  const eachBatch = async ({
    batch,
    heartbeat,
    isRunning,
    isStale,
    resolveOffset,
    pause,
  }: EachBatchPayload) => {
    const fetchedTo =
      batch.topic === trailing?.trailingTopic ? lastPosition(batch, opts.topicPrefix) : undefined
    for (let i = 0; i < batch.messages.length; i += chunkSize) {
      if (!isRunning() || isStale()) return
      const chunk: SourcedRecord[] = []
      const byReference: number[] = []
      for (const m of batch.messages.slice(i, i + chunkSize)) {
        // The decode step: a message that is not an event is dropped (counted, logged), never retried.
        const decoded = decodeMessage(batch.topic, m.value, opts.topicPrefix)
        switch (decoded.kind) {
          case 'ok':
            if (decoded.value.byReference) byReference.push(chunk.length)
            chunk.push({ record: decoded.value.record, offset: m.offset })
            break
          case 'drop':
            stats.dropped++
            stats.droppedEvents[decoded.reason] = (stats.droppedEvents[decoded.reason] ?? 0) + 1
            log('dropped an undecodable message', {
              topic: batch.topic,
              offset: m.offset,
              reason: decoded.detail,
            })
            break
          case 'retry':
          case 'deadLetter':
            throw new Error(`decoding does not ${decoded.kind}`)
          default:
            assertNever(decoded, 'step result')
        }
      }
      if (byReference.length > 0) await readPayloads(opts.pool, chunk, byReference)
      const end = Math.min(i + chunkSize, batch.messages.length)
      const last = batch.messages[end - 1]!.offset
      const part = { source: { topic: batch.topic, partition: batch.partition }, batch: chunk }
      // Whether the partition has more after this chunk, as fetched: what a trailing topic waits on.
      const more = end < batch.messages.length || BigInt(batch.offsetLag()) > 0n
      const payload = { isRunning, isStale, heartbeat }
      const outcome = combiner
        ? await combiner.add({ part, more, fetchedTo, payload })
        : await new Promise<Outcome>((resolve, reject) => {
            applyWithRetry([{ part, more, fetchedTo, payload, resolve, reject }]).catch(reject)
          })
      if (outcome === 'left-out') return
      if (outcome !== 'applied') {
        // Applied up to the first held event; the rest is fetched again once the partition resumes.
        resolveOffset((BigInt(outcome.heldFrom) - 1n).toString())
        trailing?.pause(batch.partition, pause)
        return
      }
      resolveOffset(last)
      await heartbeat()
    }
  }

  const maxAttempts = opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS
  const deadLetters = new DeadLetterTopic(opts.kafka, deadLetterTopic(opts.topicPrefix))
  let redrive: { stop(): Promise<void> } | undefined
  const topicRank = new Map(topics.map((t, i) => [t, i]))
  /**
   * Applies the parts of one or more sources in one transaction, again after a failure (with a
   * heartbeat and a backoff) until it commits; a part whose partition was revoked meanwhile, or whose
   * consumer is stopping, is left out.
   */
  const applyWithRetry = async (group: readonly Waiting[]): Promise<void> => {
    let waiting = group
    let lastError: unknown
    for (let attempt = 0; ; attempt++) {
      const live = waiting.filter((w) => {
        if (w.payload.isRunning() && !w.payload.isStale()) return true
        w.resolve('left-out')
        return false
      })
      if (live.length === 0) {
        stats.paused = false
        return
      }
      // A key's events are in the same partition number of every topic: chatbots first, then
      // conversations, then their analysis, as the consumer's topics are listed.
      const ordered = [...live].sort(
        (a, b) =>
          a.part.source.partition - b.part.source.partition ||
          (topicRank.get(a.part.source.topic) ?? 0) - (topicRank.get(b.part.source.topic) ?? 0),
      )
      try {
        if (opts.admit) {
          stats.paused = !(await opts.admit())
          if (stats.paused) {
            // The fetched batches wait here, and the fetcher with them: nothing more is read meanwhile.
            // Heartbeats keep them with this member; one refused by a rebalance marks its batch stale,
            // left out on the next turn.
            await Promise.all(live.map((w) => w.payload.heartbeat().catch(() => {})))
            await new Promise((r) => setTimeout(r, opts.pauseIntervalMs ?? 250))
            waiting = live
            attempt--
            continue
          }
        }
        if (trailing) await trailingReady
        const views = ordered.map((w) => ({ ...w.part, more: w.more, fetchedTo: w.fetchedTo }))
        // A step's `deadLetter` (consumer-pipeline.ts) goes there at once, without the batch's attempts.
        const deadLettering = attempt >= maxAttempts || lastError instanceof DeadLetterError
        if (deadLettering && lastError !== undefined && !isTransientError(lastError)) {
          // The same batches failed again and again, with an error retrying does not cure: an event at
          // a time, the one at fault set aside (dead-letters.ts), every part applied whole (the
          // trailing order is only for speed).
          const outcome = await applyIsolated(
            opts.pool,
            opts.groupId,
            ordered.map((w) => w.part),
            opts.handler,
            {
              order: opts.orderBatch,
              neverAppends: opts.neverAppends,
              verifyInJournal: true,
              maxAttempts,
              log,
              sink: deadLetters.send,
              backoff: (n) => delay(retryDelayMs(IN_BATCH_RETRY, n)),
              afterEach: () => Promise.all(live.map((w) => w.payload.heartbeat().catch(() => {}))),
            },
          )
          recordOutcome(stats, opts, outcome)
          trailing?.committed(views)
          for (const w of ordered) w.resolve('applied')
          return
        }
        // How many of each part's records go now: all, unless the trailing order holds some back.
        const counts = trailing?.admit(views) ?? ordered.map((w) => w.part.batch.length)
        const parts = ordered.flatMap((w, i) => {
          const n = counts[i]!
          if (n === w.part.batch.length) return [w.part]
          return n === 0 ? [] : [{ ...w.part, batch: w.part.batch.slice(0, n) }]
        })
        if (parts.length > 0) {
          const outcome = await applyBatches(opts.pool, opts.groupId, parts, opts.handler, {
            order: opts.orderBatch,
            neverAppends: opts.neverAppends,
            verifyInJournal: true,
          })
          recordOutcome(stats, opts, outcome)
          trailing?.committed(views)
        }
        ordered.forEach((w, i) => {
          const n = counts[i]!
          w.resolve(n === w.part.batch.length ? 'applied' : { heldFrom: w.part.batch[n]!.offset })
        })
        return
      } catch (err) {
        stats.errors++
        lastError = err
        const sources = ordered.map((w) => `${w.part.source.topic}/${w.part.source.partition}`)
        log('batch failed; retrying', { sources, attempt, err: (err as Error).message })
        if (live.some((w) => !w.payload.isRunning())) {
          for (const w of live) w.reject(err)
          return
        }
        await Promise.all(live.map((w) => w.payload.heartbeat()))
        await delay(retryDelayMs(BATCH_RETRY, attempt))
        waiting = live
      }
    }
  }
  // Above one transaction at a time, the batches of a fetch are applied together (FetchCombiner).
  const transactions = opts.partitionsConcurrently ?? 1
  const combiner = transactions > 1 ? new FetchCombiner(transactions, applyWithRetry) : undefined

  const lag = async (): Promise<PartitionLag[]> => {
    const owned = stats.partitions.map((tp) => {
      const cut = tp.lastIndexOf('/')
      return { topic: tp.slice(0, cut), partition: Number(tp.slice(cut + 1)) }
    })
    if (owned.length === 0) return []
    admin ??= (async () => {
      const a = opts.kafka.admin()
      await a.connect()
      return a
    })().catch((err) => {
      admin = undefined
      throw err
    })
    const connected = await admin
    const topicsOwned = [...new Set(owned.map((o) => o.topic))]
    const [offsets, checkpoints] = await Promise.all([
      Promise.all(topicsOwned.map(async (t) => [t, await connected.fetchTopicOffsets(t)] as const)),
      opts.pool.query<{ topic: string; partition: number; last_offset: string }>(
        'SELECT topic, partition, last_offset::text FROM consumer_checkpoints WHERE group_id = $1 AND topic = ANY($2)',
        [opts.groupId, topicsOwned],
      ),
    ])
    const ends = new Map(
      offsets.flatMap(([t, ps]) => ps.map((p) => [`${t}/${p.partition}`, { high: p.high, low: p.low }])),
    )
    const done = new Map(checkpoints.rows.map((r) => [`${r.topic}/${r.partition}`, BigInt(r.last_offset)]))
    return owned.flatMap(({ topic, partition }) => {
      const end = ends.get(`${topic}/${partition}`)
      if (!end) return []
      const checkpoint = done.get(`${topic}/${partition}`)
      // Next offset to apply: after the checkpoint, or the earliest retained one when there is none.
      const next = checkpoint !== undefined && checkpoint >= 0n ? checkpoint + 1n : BigInt(end.low)
      const behind = BigInt(end.high) - next
      return [{ topic, partition, lag: behind > 0n ? Number(behind) : 0 }]
    })
  }

  // A stop asked for meanwhile (life.running false) starts nothing more; stop() waits for the start to end.
  const begin = async () => {
    consumer = opts.kafka.consumer({
      // Environments sharing a cluster (distinct topic prefixes) must not share consumer groups either.
      // The checkpoints in Postgres keep the bare group id.
      groupId: kafkaGroupId(opts.groupId, opts.topicPrefix),
      sessionTimeout: sessionTimeoutMs,
      // A rebalance waits at most this long for members to rejoin before dropping the silent ones.
      rebalanceTimeout: Math.max(2 * sessionTimeoutMs, 10_000),
      heartbeatInterval: 1_000,
      maxWaitTimeInMs: 100,
      // Room for a full batch per partition fetch (events of a few KB), so batches are not cut short by
      // the default 1 MB per partition.
      maxBytesPerPartition: Math.max(1 << 20, chunkSize * 4096),
      // And room for such batches across the partitions of a fetch: with kafkajs' default of 10 MB in all,
      // a fetch over 36 partitions gave batches of a few hundred events, each paying a transaction, a
      // checkpoint and a rollup flush. 32 MB: what it gained, and cost in memory: bench/FINDINGS.md, "From source comments".
      maxBytes: 32 << 20,
      allowAutoTopicCreation: false,
    })
    const c = consumer
    c.on(c.events.GROUP_JOIN, ({ payload }) => {
      stats.partitions = Object.entries(payload.memberAssignment).flatMap(([topic, ps]) =>
        ps.map((p) => `${topic}/${p}`),
      )
      log('joined the consumer group', { groupId: opts.groupId, partitions: stats.partitions })
      const order = trailing
      if (order) {
        order.reset()
        // Batches wait for this (applyWithRetry): the leader's partitions with a backlog hold theirs.
        trailingReady = lag()
          .then((lags) => {
            for (const l of lags) if (l.topic === order.leaderTopic && l.lag > 0) order.behind(l.partition)
          })
          .catch((err) => log('could not read the lag; trailing events may run ahead', { err: err.message }))
      }
      seekToCheckpoints(c, opts.pool, opts.groupId, payload.memberAssignment).catch((err) =>
        log('seek to checkpoints failed; relying on in-transaction filtering', { err: err.message }),
      )
    })
    // kafkajs starts a crashed consumer again only after an error it holds retriable. After any other
    // (KafkaJSGroupCoordinatorNotFound while a broker restarts, say) it has disconnected and stays so:
    // this member would apply nothing more, and nothing else would tell. Started again here instead.
    c.on(c.events.CRASH, ({ payload }) => {
      if (payload.restart || consumer !== c || !life.running) return
      stats.restarts++
      log('the Kafka consumer stopped on an error kafkajs does not retry; starting it again', {
        groupId: opts.groupId,
        err: payload.error.message,
        restarts: stats.restarts,
      })
      void life.restart(
        (attempt) => delay(retryDelayMs(CONSUMER_RESTART, attempt)),
        (err) =>
          log('starting the Kafka consumer again failed; trying again', { err: (err as Error).message }),
      )
    })
    await c.connect()
    if (!life.running) return
    if ((opts.partitionsConcurrently ?? 1) > 1 || trailing) {
      const problem = await copartitionProblem(opts.kafka, topics)
      if (problem && (opts.partitionsConcurrently ?? 1) > 1) throw new Error(problem)
      if (problem) {
        log('trailing order off: partition numbers do not match keys across topics', { problem })
        trailing = undefined
      }
    }
    if (!life.running) return
    await c.subscribe({ topics, fromBeginning: true })
    if (!life.running) return
    await c.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      // Combined: every batch of a fetch at once into the combiner, which makes the transactions.
      partitionsConsumedConcurrently: combiner ? COMBINED_BATCHES : 1,
      eachBatch,
    })
    redrive = startConsumerRedrive(opts, stats, log)
  }

  /** Stops the re-drive poller and leaves the group: disconnects the consumer and the producer and admin. */
  const end = async () => {
    await redrive?.stop()
    redrive = undefined
    await consumer?.disconnect()
    consumer = undefined
    await deadLetters.close()
    stats.partitions = []
    const a = admin
    admin = undefined
    await a?.then((connected) => connected.disconnect()).catch(() => {})
  }

  const life = new ConsumerLifecycle(begin, end)
  return {
    groupId: opts.groupId,
    stats,
    lag,
    // A start that fails after the consumer connected (a subscribe refused, topics not co-partitioned)
    // disconnects it; a stop during a start leaves the group the start joined after it.
    start: () => life.start(),
    stop: () => life.stop(),
  }
}

/**
 * Fills in the payloads of events the relay published by reference (Kafka refused them as too large:
 * encodeRawReference) from the journal. An event no longer there (its chatbot deleted, its conversation
 * erased) keeps a null payload, which the handler meets as it meets any event it cannot open.
 */
async function readPayloads(pool: Pool, chunk: SourcedRecord[], indexes: readonly number[]): Promise<void> {
  const { rows } = await pool.query<{ event_id: string; payload: unknown }>(
    'SELECT event_id, payload FROM event_journal WHERE event_id = ANY($1::uuid[])',
    [indexes.map((i) => chunk[i]!.record.id)],
  )
  const payloads = new Map(rows.map((r) => [r.event_id, r.payload]))
  for (const i of indexes) {
    const { record, offset } = chunk[i]!
    chunk[i] = { record: { ...record, payload: payloads.get(record.id) ?? null }, offset }
  }
}

/** The journal position of a fetched batch's last event (one more decode per batch). */
function lastPosition(batch: EachBatchPayload['batch'], topicPrefix?: string): bigint | undefined {
  const last = batch.messages[batch.messages.length - 1]
  const decoded = last && decodeRecord(batch.topic, last.value, topicPrefix)
  return decoded?.ok ? BigInt(decoded.record.position) : undefined
}

/** The Kafka consumer group of a consumer: its group id, prefixed like the topics it reads. */
export function kafkaGroupId(groupId: string, topicPrefix = ''): string {
  return `${topicPrefix}${groupId}`
}

async function seekToCheckpoints(
  consumer: Consumer,
  pool: Pool,
  groupId: string,
  assignment: Record<string, number[]>,
): Promise<void> {
  const { rows } = await pool.query<{ topic: string; partition: number; last_offset: string }>(
    'SELECT topic, partition, last_offset::text FROM consumer_checkpoints WHERE group_id = $1 AND topic = ANY($2)',
    [groupId, Object.keys(assignment)],
  )
  const checkpoints = new Map(rows.map((r) => [`${r.topic}/${r.partition}`, BigInt(r.last_offset)]))
  for (const [topic, partitions] of Object.entries(assignment)) {
    for (const partition of partitions) {
      const last = checkpoints.get(`${topic}/${partition}`)
      if (last !== undefined && last >= 0n)
        consumer.seek({ topic, partition, offset: (last + 1n).toString() })
    }
  }
}

/**
 * Why the topics are not co-partitioned, or undefined when they are. With the same partition count, a
 * key is in the same partition number of every topic, which is what a handler applying partitions
 * concurrently orders by, and what the trailing order compares.
 */
async function copartitionProblem(kafka: Kafka, topics: readonly string[]): Promise<string | undefined> {
  const admin = kafka.admin()
  await admin.connect()
  try {
    const { topics: metadata } = await admin.fetchTopicMetadata({ topics: [...topics] })
    const counts = metadata.map((t) => `${t.name} (${t.partitions.length})`)
    if (new Set(metadata.map((t) => t.partitions.length)).size > 1)
      return `topics ${counts.join(', ')} differ in partition count: a key's events would be in different partition numbers, and batches of different partitions could not be applied at the same time safely`
    return undefined
  } finally {
    await admin.disconnect()
  }
}

/**
 * Most batches of one fetch handed to the combiner at once (kafkajs' partitionsConsumedConcurrently):
 * every partition a member is likely to own.
 */
const COMBINED_BATCHES = 128

/**
 * What became of a part: applied whole; left out (its partition was revoked, or the consumer is
 * stopping); or applied up to the offset of its first event held back (TrailingOrder).
 */
type Outcome = 'applied' | 'left-out' | { readonly heldFrom: string }

interface Waiting {
  readonly part: BatchPart
  /** Whether the part's partition had events after it when fetched. */
  readonly more: boolean
  /** Trailing topic: the journal position of the last event its fetch brought (TrailingPart). */
  readonly fetchedTo?: bigint
  readonly payload: Pick<EachBatchPayload, 'isRunning' | 'isStale' | 'heartbeat'>
  readonly resolve: (outcome: Outcome) => void
  readonly reject: (err: unknown) => void
}

/**
 * Applies the batches of a Kafka fetch in at most `transactions` transactions, instead of one each.
 * kafkajs calls eachBatch per partition: over the 36 partitions of three topics that was 36
 * transactions, each with its checkpoint and commit, per fetch, and the fetch after waits for the last
 * of them. The batches that arrive in one turn of the event loop are grouped by partition number
 * (modulo `transactions`), so a key's batches of every topic (the same partition number, see
 * copartitionProblem) share a transaction, and each group is applied in one (applyBatches).
 */
class FetchCombiner {
  private queue: Waiting[] = []
  private scheduled = false

  constructor(
    private readonly transactions: number,
    private readonly apply: (group: Waiting[]) => Promise<void>,
  ) {}

  /** Resolves once the part is applied, left out, or applied in part (see Outcome). */
  add(item: Omit<Waiting, 'resolve' | 'reject'>): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...item, resolve, reject })
      if (this.scheduled) return
      this.scheduled = true
      setImmediate(() => this.flush())
    })
  }

  private flush(): void {
    this.scheduled = false
    const taken = this.queue
    this.queue = []
    const groups = new Map<number, Waiting[]>()
    for (const w of taken) {
      const key = w.part.source.partition % this.transactions
      const group = groups.get(key)
      if (group) group.push(w)
      else groups.set(key, [w])
    }
    for (const group of groups.values()) {
      this.apply(group).catch((err) => {
        for (const w of group) w.reject(err)
      })
    }
  }
}

/** The Kafka topic that receives every consumer group's dead letters (`<prefix>dead-letters`). */
export function deadLetterTopic(topicPrefix = ''): string {
  return `${topicPrefix}dead-letters`
}

/**
 * The dead-letter topic in Kafka mode: each event a group sets aside is published there (keyed by its
 * stream, the event as it arrived, with the group, error, attempts and source in headers) before the
 * transaction that records it in the dead_letters table, which the operator command and the re-drive
 * read. Published at least once: a crash between the two publishes it again on the next attempt. The
 * topic is made on first use (one partition: dead letters are rare, and read in the order they came).
 */
class DeadLetterTopic {
  private producer: Promise<Producer> | undefined

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
  ) {}

  readonly send: DeadLetterSink = async (letter) => {
    const producer = await this.connect()
    await producer.send({
      topic: this.topic,
      acks: -1,
      messages: [
        {
          key: letter.record.streamId,
          value: encodeRecord(letter.record),
          headers: {
            group: letter.groupId,
            error: letter.error,
            attempts: String(letter.attempts),
            'source-topic': letter.source.topic,
            'source-partition': String(letter.source.partition),
            'source-offset': letter.offset,
            'stream-type': letter.record.streamType,
          },
        },
      ],
    })
  }

  private connect(): Promise<Producer> {
    this.producer ??= (async () => {
      const admin = this.kafka.admin()
      await admin.connect()
      try {
        if (!(await admin.listTopics()).includes(this.topic)) {
          await admin
            .createTopics({ waitForLeaders: false, topics: [{ topic: this.topic, numPartitions: 1 }] })
            .catch((err: { type?: string }) => {
              if (err.type !== 'TOPIC_ALREADY_EXISTS') throw err
            })
        }
        await waitForTopicLeaders(admin, [this.topic])
      } finally {
        await admin.disconnect()
      }
      const producer = this.kafka.producer({
        allowAutoTopicCreation: false,
        idempotent: true,
        maxInFlightRequests: 1,
      })
      await producer.connect()
      return producer
    })().catch((err) => {
      this.producer = undefined
      throw err
    })
    return this.producer
  }

  async close(): Promise<void> {
    const producer = this.producer
    this.producer = undefined
    await producer?.then((p) => p.disconnect()).catch(() => {})
  }
}
