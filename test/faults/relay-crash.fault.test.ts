/**
 * Fault 2: the relay process is SIGKILLed between publishing a batch and recording that it did. The relay
 * moves its checkpoint only after Kafka acknowledged the batch, so on restart it publishes that batch
 * again: every committed event reaches Kafka (some twice), and the projector applies each once.
 *
 * Landing the kill in that window, deterministically and without a hook in the relay: the test holds a
 * lock on the relay's checkpoint. The relay publishes its batch (acks=all), then blocks on the
 * checkpoint update; the test sees its connection waiting on the lock and kills the process there. A few
 * more kills land at random moments of publishing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { kafkaBrokers } from '../support/kafka.ts'
import { waitFor } from '../support/wait.ts'
import { type Deployment, projectorStats, startDeployment, waitUntilDrained } from './support/deployment.ts'
import { startCaptureLoad } from './support/load.ts'
import { killAllServices, serviceLogs } from './support/processes.ts'
import { expectReadModelsEqualAcknowledged } from './support/read-models.ts'
import { compareJournalWithKafka } from './support/topics.ts'

let d: Deployment

beforeAll(async () => {
  d = await startDeployment({ brokers: kafkaBrokers()! })
})
afterAll(async () => {
  await killAllServices()
  await d?.close()
})

const CHECKPOINT_ROW = `consumer_checkpoints WHERE group_id = '$relay' AND topic = '$journal' AND partition = 0`

/**
 * Holds the relay's checkpoint until the relay, having published a batch, waits to move it; then
 * SIGKILLs the relay.
 */
async function killRelayBetweenPublishAndCheckpoint(): Promise<void> {
  const pool = d.db.pool
  await waitFor(async () => (await pool.query(`SELECT 1 FROM ${CHECKPOINT_ROW}`)).rowCount === 1, {
    what: 'the relay to record a first checkpoint',
  })
  const lock = await pool.connect()
  try {
    await lock.query('BEGIN')
    // A table lock, not a row lock: it blocks the relay's checkpoint write (and the projector's, for the
    // moment) without giving this transaction an id, which would hold back the xmin horizon below which
    // the relay reads the journal, and so keep it from ever reaching a batch to publish.
    await lock.query('LOCK TABLE consumer_checkpoints IN SHARE MODE')
    // The relay's connection blocked on our lock is in the middle of recording a batch Kafka has acked.
    const blocked = await waitFor(
      async () => {
        const { rows } = await pool.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'relay' AND wait_event_type = 'Lock'
              AND query LIKE '%consumer_checkpoints%'`,
        )
        return rows[0]?.pid
      },
      { timeoutMs: 30_000, what: 'the relay to wait on its checkpoint after publishing' },
    ).catch(async (err) => {
      const { rows } = await pool.query(
        `SELECT application_name, state, wait_event_type, wait_event, left(query, 80) AS query
           FROM pg_stat_activity WHERE datname = current_database()`,
      )
      throw new Error(`${(err as Error).message}; sessions: ${JSON.stringify(rows)}`)
    })
    await d.relay.kill('SIGKILL')
    // The dead process's last statement still sits in its server backend, queued behind our lock; a crash
    // takes it down with the connection (Postgres would only notice on its next socket read).
    await pool.query('SELECT pg_terminate_backend($1)', [blocked])
  } finally {
    await lock.query('ROLLBACK').catch(() => {})
    lock.release()
  }
}

describe('fault 2: kill -9 the relay between commit and publish', () => {
  it('publishes every committed event to Kafka, and the read models apply each once', async () => {
    const load = startCaptureLoad({
      url: d.gateway.url,
      apiKey: d.chatbot.apiKey,
      conversations: 120,
      capturesPerConversation: 5,
      messagesPerCapture: 10,
      concurrency: 4,
      // Spread over ~20 s, so that it is still writing when the last kill lands.
      pauseMs: 110,
    })
    try {
      const rounds = 5
      for (let round = 1; round <= rounds; round++) {
        await load.reached((load.plannedMessages * round) / (rounds + 2), 120_000)
        if (round % 2 === 1) {
          await killRelayBetweenPublishAndCheckpoint()
        } else {
          // A kill at whatever point of publishing the relay happens to be.
          await new Promise((r) => setTimeout(r, Math.random() * 200))
          await d.relay.kill('SIGKILL')
        }
        await d.relay.start()
      }
      await load.done
      expect(load.failures).toEqual([])
      expect([...load.statuses.keys()]).toEqual([200])

      await waitUntilDrained(d, { relayMs: 60_000, projectorMs: 60_000 })
      const kafka = await compareJournalWithKafka(d.db.pool, d.kafka, d.admin, d.topics)
      expect(kafka.missing, 'committed events missing from Kafka').toEqual([])
      expect(kafka.unknown).toEqual([])
      // The batches the relay had published but not recorded went out again.
      expect(kafka.extraCopies).toBeGreaterThan(0)

      await expectReadModelsEqualAcknowledged(d.db.pool, load)
      // The projector saw the second copies and dropped them.
      expect((await projectorStats(d.projectors[0]!)).duplicates).toBeGreaterThan(0)
      console.log(
        `fault 2: ${kafka.journal} events committed, all in Kafka, ${kafka.extraCopies} published twice and applied once`,
      )
    } catch (err) {
      await load.stop()
      throw new Error(`${(err as Error).message}\n${serviceLogs()}`, { cause: err })
    }
  })
})
