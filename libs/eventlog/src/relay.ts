import { defaultsOf, relay as relayConfig } from '@cas/config'
import { retryDelayMs, Waiter } from '@cas/db'
import type { Kafka, Message, Producer } from 'kafkajs'
import type { Pool, PoolClient } from 'pg'
import { DEFAULT_MAX_ATTEMPTS } from './dead-letters.ts'
import { journalTotalLag } from './journal-consumer.ts'
import { type RawJournalRecord, readJournalRaw } from './journal-reader.ts'
import {
  createRelayProducer,
  encodeRawRecord,
  encodeRawReference,
  refusesRecord,
  sendEvery,
  sendLane,
} from './kafka.ts'
import { LifecycleTurns } from './lifecycle-turns.ts'
import { RELAY_RETRY } from './retry-policies.ts'
import { topicFor } from './topics.ts'

export interface RelayOptions {
  readonly pool: Pool
  readonly kafka: Kafka
  readonly topicPrefix?: string
  /** Events read from the journal per batch (default 500). */
  readonly batchSize?: number
  /**
   * Batches published and not yet acknowledged by Kafka, at most (default 4): the relay reads ahead and
   * sends while earlier batches wait for their acks. 1 is send, wait, checkpoint, one batch at a time.
   */
  readonly maxInFlight?: number
  /** How long to wait before looking again when the journal had nothing new (default 20 ms). */
  readonly pollIntervalMs?: number
  /**
   * Sends in a row that Kafka refused because of a record (too large for the topic, invalid) before the
   * relay publishes the refused events by reference (default DEFAULT_MAX_ATTEMPTS): the envelope
   * without its payload, which consumers read from the journal (encodeRawReference). Infinity leaves the
   * relay waiting for an operator to raise the topic's limit.
   */
  readonly maxAttempts?: number
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void
  /** The clock `roleSince` is read from (the wall clock by default). */
  readonly now?: () => Date
}

export interface RelayStats {
  published: number
  /** Events published by reference: Kafka refused them as they were (see `maxAttempts`). */
  byReference: number
  batches: number
  errors: number
  isLeader: boolean
  /**
   * When it last began leading or standing by (ISO 8601): its start, a lock taken, a lock lost or given
   * back after a failed batch.
   */
  roleSince: string
  checkpoint: string
}

/** RELAY_BATCH_SIZE's and RELAY_MAX_IN_FLIGHT's defaults (libs/config states them). */
export const DEFAULT_RELAY_BATCH_SIZE = defaultsOf(relayConfig).RELAY_BATCH_SIZE
export const DEFAULT_RELAY_MAX_IN_FLIGHT = defaultsOf(relayConfig).RELAY_MAX_IN_FLIGHT

/** The relay's checkpoint in consumer_checkpoints: a journal position, as a one-partition journal group's. */
export const RELAY_GROUP = '$relay'
const CHECKPOINT = { group: RELAY_GROUP, topic: '$journal', partition: 0 } as const
// Session advisory lock held by the one relay allowed to publish (others stand by).
const LEADER_LOCK = [0x7265_6c61, 1] as const

/**
 * Streams the journal into Kafka, keyed by stream id, each stream in journal order.
 *
 * It reads batches from its checkpoint on and publishes them with acks=all, several at once, and moves the
 * checkpoint to the end of the longest run of acknowledged batches: nothing is ever skipped, because the
 * checkpoint only moves past what Kafka acknowledged, and a crash publishes the unrecorded batches again on
 * restart (consumers drop the duplicates by stream version). See `PublishRun` for how each stream keeps
 * its order with several batches in flight. Only one relay publishes at a time: it holds a Postgres
 * advisory lock for as long as its session lives, so a standby takes over when it dies.
 */
export class Relay {
  readonly stats: RelayStats = {
    published: 0,
    byReference: 0,
    batches: 0,
    errors: 0,
    isLeader: false,
    roleSince: '',
    checkpoint: '0',
  }
  private readonly producer: Producer
  private readonly maxInFlight: number
  private readonly waiter = new Waiter()
  private running = false
  private loop: Promise<void> | undefined
  /** Starts and stops, one after another in the order they were asked for. */
  private readonly turns = new LifecycleTurns()
  private leaderClient: PoolClient | undefined
  private leaderLost: ((err: Error) => void) | undefined
  private failures = 0
  /**
   * Runs in a row that Kafka's refusal of a record ended, at the same checkpoint (other lanes' sends
   * succeed meanwhile, so `failures` alone, reset by any progress, would not count them).
   */
  private refused = { checkpoint: '', runs: 0 }

  constructor(private readonly opts: RelayOptions) {
    this.stats.roleSince = this.now().toISOString()
    this.maxInFlight = opts.maxInFlight ?? DEFAULT_RELAY_MAX_IN_FLIGHT
    const batchSize = opts.batchSize ?? DEFAULT_RELAY_BATCH_SIZE
    if (!Number.isInteger(this.maxInFlight) || this.maxInFlight < 1)
      throw new RangeError('maxInFlight must be an integer ≥ 1')
    if (!Number.isInteger(batchSize) || batchSize < 1)
      throw new RangeError('batchSize must be an integer ≥ 1')
    this.producer = createRelayProducer(opts.kafka, { maxInFlight: this.maxInFlight })
  }

  /**
   * Connects the producer and starts publishing. Starts and stops run one after another, each after the
   * one asked for before it has ended: the producer is never connected and disconnected at once.
   */
  start(): Promise<void> {
    return this.turns.start(async (stopped) => {
      // Asked for before a stop that has been asked for since: it starts nothing.
      if (this.running || stopped()) return
      await this.producer.connect()
      // A stop asked for while the producer connected: the loop never starts, the stop disconnects it.
      if (stopped()) return
      this.running = true
      this.loop = this.run()
    })
  }

  /**
   * Stops after the batches in flight (if any) have been acknowledged and checkpointed. Asked for while
   * `start()` is under way, it waits for the start to end (the producer connected, or its connection
   * failed), which then starts nothing, and disconnects the producer.
   */
  stop(): Promise<void> {
    this.running = false
    this.waiter.wake()
    return this.turns.stop(async () => {
      await this.loop
      this.loop = undefined
      await this.releaseLeadership()
      await this.producer.disconnect()
    })
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        const leader = await this.ensureLeadership()
        if (!leader) {
          await this.waiter.sleep(1_000)
          continue
        }
        const checkpoint = await readCheckpoint(this.opts.pool)
        this.stats.checkpoint = checkpoint
        const run = new PublishRun(
          {
            pool: this.opts.pool,
            producer: this.producer,
            stats: this.stats,
            waiter: this.waiter,
            topicPrefix: this.opts.topicPrefix,
            batchSize: this.opts.batchSize ?? DEFAULT_RELAY_BATCH_SIZE,
            lanes: this.maxInFlight,
            pollIntervalMs: this.opts.pollIntervalMs ?? 20,
            // Kafka keeps refusing a record of the batch at the checkpoint: one batch, an event at a
            // time, those refused by reference, then back to whole batches.
            careful:
              this.refused.checkpoint === checkpoint &&
              this.refused.runs >= (this.opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS),
            log: this.opts.log,
            leading: () => this.leaderClient === leader,
            proceed: () => this.running && this.leaderClient === leader,
            progressed: () => {
              this.failures = 0
            },
          },
          checkpoint,
        )
        await run.run()
      } catch (err) {
        this.stats.errors++
        if (!refusesRecord(err)) this.refused = { checkpoint: '', runs: 0 }
        else if (this.refused.checkpoint === this.stats.checkpoint) this.refused.runs++
        else this.refused = { checkpoint: this.stats.checkpoint, runs: 1 }
        this.opts.log?.('relay batch failed; retrying from the checkpoint', {
          err: (err as Error).message,
          attempt: this.failures,
        })
        await this.releaseLeadership()
        await this.waiter.sleep(retryDelayMs(RELAY_RETRY, this.failures++))
      }
    }
  }

  private async ensureLeadership(): Promise<PoolClient | undefined> {
    if (this.leaderClient) return this.leaderClient
    const client = await this.opts.pool.connect()
    let locked: boolean
    try {
      const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [
        ...LEADER_LOCK,
      ])
      locked = rows[0]?.ok === true
    } catch (err) {
      // The connection lost as it was lent (a server restart): back to the pool to be discarded. Kept, it
      // took a pool slot for good at each such failure, and pool.end() waited for it forever.
      client.release(err as Error)
      throw err
    }
    if (!locked) {
      client.release()
      return undefined
    }
    // Losing this connection loses the lock: stop publishing until it is ours again. (The pool drops the
    // dead connection, listener and all.)
    const lost = (err: Error) => {
      if (this.leaderClient !== client) return
      this.leaderClient = undefined
      this.lead(false)
      client.release(err)
    }
    client.on('error', lost)
    this.leaderLost = lost
    this.leaderClient = client
    this.lead(true)
    return client
  }

  private lead(leading: boolean): void {
    if (this.stats.isLeader === leading) return
    this.stats.isLeader = leading
    this.stats.roleSince = this.now().toISOString()
  }

  private now(): Date {
    return this.opts.now?.() ?? new Date()
  }

  private async releaseLeadership(): Promise<void> {
    const client = this.leaderClient
    this.leaderClient = undefined
    this.lead(false)
    if (!client) return
    try {
      await client.query('SELECT pg_advisory_unlock($1, $2)', [...LEADER_LOCK])
      // Back to the pool, without a listener more each time it led.
      if (this.leaderLost) client.off('error', this.leaderLost)
      client.release()
    } catch (err) {
      client.release(err as Error)
    }
  }
}

interface RunContext {
  readonly pool: Pool
  readonly producer: Producer
  readonly stats: RelayStats
  /** Woken by the relay's stop() and by every acknowledgement, checkpoint and failure of the run. */
  readonly waiter: Waiter
  readonly topicPrefix: string | undefined
  readonly batchSize: number
  /** Concurrent senders, and batches in flight at most. */
  readonly lanes: number
  readonly pollIntervalMs: number
  /** Whether the relay still holds the publishing lock: lanes send what they have queued only then. */
  readonly leading: () => boolean
  /** Whether to read on: the relay still runs and still leads. */
  readonly proceed: () => boolean
  /** Called on each acknowledgement. */
  readonly progressed: () => void
  /**
   * One batch only, each event in a request of its own, and an event Kafka refuses as a record
   * published by reference instead (after `RelayOptions.maxAttempts` such failures in a row).
   */
  readonly careful: boolean
  readonly log: RelayOptions['log']
}

/** One batch read from the journal. */
interface Batch {
  /** Position of its last event. */
  readonly last: string
  readonly size: number
  /** Its parts (one per lane it has events for) not yet acknowledged. */
  unacked: number
}

/** The events of one batch that one lane sends, by topic, in journal order. */
interface Part {
  readonly batch: Batch
  readonly byTopic: Map<string, Message[]>
  readonly events: number
}

interface Lane {
  readonly queue: Part[]
  busy: boolean
  idle: Promise<void>
}

/**
 * Publishes from a checkpoint on, with up to `lanes` batches in flight, until the relay stops or loses the
 * lead, or something fails.
 *
 * Each stream's events go through one lane only (`sendLane`: the producer's partitioner modulo the lane
 * count), and a lane sends one request at a time, in journal order, merging the parts it has queued (up to
 * a batch's size).
 * So no two requests in flight carry events of the same stream, and kafkajs retrying one request cannot
 * put a stream's later events before its earlier ones. Lanes acknowledge independently: the checkpoint
 * moves to the end of the longest run of batches that every lane has acknowledged.
 *
 * When a send fails, nothing more is sent: the requests under way settle, the acknowledged run is
 * checkpointed, and `run()` throws; the relay then starts again from the checkpoint. Batches after the
 * failed one that other lanes had delivered go out again (duplicates, dropped by consumers by stream
 * version), and in the failed lane nothing after the failed request was sent, so every stream's first
 * copies in Kafka stay in journal order. Consumers rely on it: they drop an event whose stream version
 * is not above the last they applied, so a stream's later event published before an earlier one would
 * lose the earlier.
 */
class PublishRun {
  /** Batches read and not yet checkpointed, in journal order. */
  private readonly window: Batch[] = []
  private readonly lanes: Lane[]
  private failure: { error: unknown } | undefined
  private readTo: string
  private ackedTo: string
  private writtenTo: string
  private writer: { busy: boolean; idle: Promise<void> } = { busy: false, idle: Promise.resolve() }
  /** Careful runs: each message's by-reference form, and the event it carries. */
  private readonly references = new WeakMap<Message, { value: string; record: RawJournalRecord }>()

  constructor(
    private readonly c: RunContext,
    checkpoint: string,
  ) {
    this.readTo = this.ackedTo = this.writtenTo = checkpoint
    this.lanes = Array.from({ length: c.lanes }, () => ({ queue: [], busy: false, idle: Promise.resolve() }))
  }

  async run(): Promise<void> {
    try {
      while (!this.failure && this.c.proceed()) {
        if (this.c.careful && this.window.length > 0) break
        if (!this.hasRoom()) {
          await this.c.waiter.sleep(1_000)
          continue
        }
        const { records } = await readJournalRaw(this.c.pool, { after: this.readTo, limit: this.c.batchSize })
        if (records.length === 0) await this.c.waiter.sleep(this.c.pollIntervalMs)
        else this.dispatch(records)
      }
    } catch (err) {
      this.fail(err)
    }
    // Unless something failed or the lead is lost, the lanes send what they have queued; then the
    // acknowledged run is recorded.
    await Promise.all(this.lanes.map((l) => l.idle))
    this.checkpoint()
    await this.writer.idle
    if (this.failure) throw this.failure.error
  }

  /** Fewer than `lanes` batches unacknowledged, and not too many waiting for their checkpoint. */
  private hasRoom(): boolean {
    let unacked = 0
    for (const b of this.window) if (b.unacked > 0) unacked++
    return unacked < this.c.lanes && this.window.length < 2 * this.c.lanes
  }

  private dispatch(records: readonly RawJournalRecord[]) {
    const parts = new Map<number, Map<string, Message[]>>()
    for (const r of records) {
      const lane = sendLane(r.streamId, this.lanes.length)
      const topic = topicFor(r.streamType, this.c.topicPrefix)
      const byTopic = parts.get(lane) ?? new Map<string, Message[]>()
      parts.set(lane, byTopic)
      const messages = byTopic.get(topic) ?? []
      byTopic.set(topic, messages)
      const message = {
        key: r.streamId,
        value: encodeRawRecord(r),
        headers: { 'event-type': r.type, 'event-version': String(r.version) },
      }
      if (this.c.careful) this.references.set(message, { value: encodeRawReference(r), record: r })
      messages.push(message)
    }
    const batch: Batch = {
      last: records[records.length - 1]!.position,
      size: records.length,
      unacked: parts.size,
    }
    this.window.push(batch)
    this.readTo = batch.last
    for (const [i, byTopic] of parts) {
      const lane = this.lanes[i]!
      let events = 0
      for (const messages of byTopic.values()) events += messages.length
      lane.queue.push({ batch, byTopic, events })
      if (!lane.busy) {
        lane.busy = true
        lane.idle = this.drain(lane)
      }
    }
  }

  /** Sends the lane's queued parts, one request at a time, until its queue is empty or something failed. */
  private async drain(lane: Lane): Promise<void> {
    try {
      while (lane.queue.length > 0 && !this.failure && this.c.leading()) {
        // What the lane has queued, in one request of at most a batch's size (or one part, if larger): a
        // request per partition as large as the relay's one batch at a time made.
        let events = lane.queue[0]!.events
        let n = 1
        while (n < lane.queue.length && events + lane.queue[n]!.events <= this.c.batchSize) {
          events += lane.queue[n]!.events
          n++
        }
        const parts = lane.queue.splice(0, n)
        const topicMessages = new Map<string, Message[]>()
        for (const part of parts) {
          for (const [topic, messages] of part.byTopic) {
            const all = topicMessages.get(topic)
            if (all) all.push(...messages)
            else topicMessages.set(topic, [...messages])
          }
        }
        if (this.c.careful) await this.sendEach(topicMessages)
        else
          await sendEvery(
            this.c.producer,
            [...topicMessages].map(([topic, messages]) => ({ topic, messages })),
          )
        for (const part of parts) {
          if (--part.batch.unacked === 0) {
            this.c.stats.published += part.batch.size
            this.c.stats.batches++
          }
        }
        this.c.progressed()
        this.acknowledged()
      }
    } catch (err) {
      this.fail(err)
    } finally {
      lane.busy = false
    }
  }

  /**
   * Sends each message in a request of its own, in order; one Kafka refuses as a record goes by reference
   * (the envelope without its payload, `"payloadRef": "journal"`), so that the stream keeps its order and
   * nothing is skipped. A message refused even so fails the run as any send does.
   */
  private async sendEach(topicMessages: ReadonlyMap<string, Message[]>): Promise<void> {
    for (const [topic, messages] of topicMessages) {
      for (const message of messages) {
        try {
          await sendEvery(this.c.producer, [{ topic, messages: [message] }])
        } catch (err) {
          const reference = this.references.get(message)
          if (!reference || !refusesRecord(err)) throw err
          await sendEvery(this.c.producer, [
            {
              topic,
              messages: [
                {
                  ...message,
                  value: reference.value,
                  headers: { ...message.headers, 'payload-ref': 'journal' },
                },
              ],
            },
          ])
          this.c.stats.byReference++
          this.c.log?.('published an event by reference: Kafka refused it as a record', {
            eventId: reference.record.id,
            type: reference.record.type,
            streamId: reference.record.streamId,
            position: reference.record.position,
            bytes: Buffer.byteLength(message.value as string),
            err: (err as Error).message,
          })
        }
      }
    }
  }

  private acknowledged() {
    let end: string | undefined
    for (const b of this.window) {
      if (b.unacked > 0) break
      end = b.last
    }
    if (end !== undefined && end !== this.ackedTo) {
      this.ackedTo = end
      this.checkpoint()
    }
    this.c.waiter.wake()
  }

  /** Records the acknowledged run as the checkpoint, unless a write is already under way (it goes on). */
  private checkpoint() {
    if (this.writer.busy || this.ackedTo === this.writtenTo) return
    this.writer.busy = true
    this.writer.idle = this.writeCheckpoints()
  }

  private async writeCheckpoints(): Promise<void> {
    try {
      while (this.ackedTo !== this.writtenTo) {
        const to = this.ackedTo
        await this.c.pool.query(
          `INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset) VALUES ($1, $2, $3, $4)
           ON CONFLICT (group_id, topic, partition) DO UPDATE SET last_offset = EXCLUDED.last_offset, updated_at = now()`,
          [CHECKPOINT.group, CHECKPOINT.topic, CHECKPOINT.partition, to],
        )
        this.writtenTo = to
        this.c.stats.checkpoint = to
        while (this.window[0] && BigInt(this.window[0].last) <= BigInt(to)) this.window.shift()
        this.c.waiter.wake()
      }
    } catch (err) {
      this.fail(err)
    } finally {
      this.writer.busy = false
    }
  }

  private fail(error: unknown) {
    this.failure ??= { error }
    this.c.waiter.wake()
  }
}

async function readCheckpoint(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ last_offset: string }>(
    'SELECT last_offset::text FROM consumer_checkpoints WHERE group_id = $1 AND topic = $2 AND partition = $3',
    [CHECKPOINT.group, CHECKPOINT.topic, CHECKPOINT.partition],
  )
  return rows[0]?.last_offset ?? '0'
}

/**
 * Has the next relay publish the whole journal from its start: empties the relay's checkpoint, for a
 * database restored from a backup that moves to new topics (docs/operations.md, Backups), which then hold
 * the whole journal rather than what was committed since the backup. Refused while a relay runs on the
 * database (it holds the publishing lock, which this takes for as long as it works). Returns the events
 * the journal holds, which the relay will publish, or undefined when refused.
 */
export async function republishJournal(pool: Pool): Promise<{ readonly events: number } | undefined> {
  const client = await pool.connect()
  try {
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [
      ...LEADER_LOCK,
    ])
    if (rows[0]?.ok !== true) return undefined
    try {
      await client.query(
        'DELETE FROM consumer_checkpoints WHERE group_id = $1 AND topic = $2 AND partition = $3',
        [CHECKPOINT.group, CHECKPOINT.topic, CHECKPOINT.partition],
      )
      const { rows: counted } = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM event_journal',
      )
      return { events: counted[0]!.n }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, $2)', [...LEADER_LOCK])
    }
  } finally {
    client.release()
  }
}

/** Relay lag: journal events committed (and readable) that the relay has not yet had acknowledged by Kafka. */
export function relayLag(pool: Pool): Promise<number> {
  return journalTotalLag(pool, CHECKPOINT.group)
}
