import type { Kafka, Producer } from 'kafkajs'
import type { Pool, PoolClient } from 'pg'
import { journalBacklog } from './journal-consumer.ts'
import { readJournal } from './journal-reader.ts'
import { createRelayProducer, encodeRecord } from './kafka.ts'
import { backoffMs, Waiter } from './sleep.ts'
import { topicFor } from './topics.ts'

export interface RelayOptions {
  readonly pool: Pool
  readonly kafka: Kafka
  readonly topicPrefix?: string
  /** Events read from the journal and sent per Kafka request (default 500). */
  readonly batchSize?: number
  /** How long to wait before looking again when the journal had nothing new (default 20 ms). */
  readonly pollIntervalMs?: number
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void
}

export interface RelayStats {
  published: number
  batches: number
  errors: number
  isLeader: boolean
  checkpoint: string
}

const CHECKPOINT = { group: '$relay', topic: '$journal', partition: 0 } as const
// Session advisory lock held by the one relay allowed to publish (others stand by).
const LEADER_LOCK = [0x7265_6c61, 1] as const

/**
 * Streams the journal into Kafka in position order, keyed by stream id.
 *
 * It publishes a batch, waits for acks=all, then moves its checkpoint. A crash between the two publishes
 * the batch again on restart (consumers drop the duplicates); nothing is ever skipped, because the
 * checkpoint only moves past what Kafka acknowledged. Only one relay publishes at a time: it holds a
 * Postgres advisory lock for as long as its session lives, so a standby takes over when it dies.
 */
export class Relay {
  readonly stats: RelayStats = { published: 0, batches: 0, errors: 0, isLeader: false, checkpoint: '0' }
  private readonly producer: Producer
  private readonly waiter = new Waiter()
  private running = false
  private loop: Promise<void> | undefined
  private leaderClient: PoolClient | undefined

  constructor(private readonly opts: RelayOptions) {
    this.producer = createRelayProducer(opts.kafka)
  }

  async start(): Promise<void> {
    if (this.running) return
    await this.producer.connect()
    this.running = true
    this.loop = this.run()
  }

  /** Stops after the batch in flight (if any) has been acknowledged and checkpointed. */
  async stop(): Promise<void> {
    this.running = false
    this.waiter.wake()
    await this.loop
    await this.releaseLeadership()
    await this.producer.disconnect()
  }

  private async run(): Promise<void> {
    let failures = 0
    while (this.running) {
      try {
        if (!(await this.ensureLeadership())) {
          await this.waiter.sleep(1_000)
          continue
        }
        const sent = await this.publishBatch()
        failures = 0
        if (sent === 0) await this.waiter.sleep(this.opts.pollIntervalMs ?? 20)
      } catch (err) {
        this.stats.errors++
        this.opts.log?.('relay batch failed; retrying', { err: (err as Error).message, attempt: failures })
        await this.releaseLeadership()
        await this.waiter.sleep(backoffMs(failures++, 200, 5_000))
      }
    }
  }

  /** Publishes the next batch after the checkpoint; returns how many events it sent. */
  async publishBatch(): Promise<number> {
    const { pool } = this.opts
    const checkpoint = await readCheckpoint(pool)
    const { records } = await readJournal(pool, { after: checkpoint, limit: this.opts.batchSize ?? 500 })
    this.stats.checkpoint = checkpoint
    if (records.length === 0) return 0
    const byTopic = new Map<string, { key: string; value: string; headers: Record<string, string> }[]>()
    for (const r of records) {
      const topic = topicFor(r.streamType, this.opts.topicPrefix)
      const messages = byTopic.get(topic) ?? []
      byTopic.set(topic, messages)
      messages.push({
        key: r.streamId,
        value: encodeRecord(r),
        headers: { 'event-type': r.type, 'event-version': String(r.version) },
      })
    }
    await this.producer.sendBatch({
      acks: -1,
      topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
    })
    const last = records[records.length - 1]!.position
    await pool.query(
      `INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset) VALUES ($1, $2, $3, $4)
       ON CONFLICT (group_id, topic, partition) DO UPDATE SET last_offset = EXCLUDED.last_offset, updated_at = now()`,
      [CHECKPOINT.group, CHECKPOINT.topic, CHECKPOINT.partition, last],
    )
    this.stats.published += records.length
    this.stats.batches++
    this.stats.checkpoint = last
    return records.length
  }

  private async ensureLeadership(): Promise<boolean> {
    if (this.leaderClient) return true
    const client = await this.opts.pool.connect()
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [
      ...LEADER_LOCK,
    ])
    if (!rows[0]?.ok) {
      client.release()
      return false
    }
    // Losing this connection loses the lock: stop publishing until it is ours again.
    client.on('error', () => {
      if (this.leaderClient === client) this.leaderClient = undefined
    })
    this.leaderClient = client
    this.stats.isLeader = true
    return true
  }

  private async releaseLeadership(): Promise<void> {
    const client = this.leaderClient
    this.leaderClient = undefined
    this.stats.isLeader = false
    if (!client) return
    try {
      await client.query('SELECT pg_advisory_unlock($1, $2)', [...LEADER_LOCK])
      client.release()
    } catch (err) {
      client.release(err as Error)
    }
  }
}

async function readCheckpoint(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ last_offset: string }>(
    'SELECT last_offset::text FROM consumer_checkpoints WHERE group_id = $1 AND topic = $2 AND partition = $3',
    [CHECKPOINT.group, CHECKPOINT.topic, CHECKPOINT.partition],
  )
  return rows[0]?.last_offset ?? '0'
}

/** Relay lag: journal events committed (and readable) that the relay has not yet had acknowledged by Kafka. */
export function relayBacklog(pool: Pool): Promise<number> {
  return journalBacklog(pool, CHECKPOINT.group)
}
