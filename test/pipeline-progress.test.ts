/**
 * How far a consumer group is behind what was committed (libs/eventlog/src/lag-probe.ts), on both backends:
 * the journal read directly, and Kafka fed by the relay. Real Postgres, real Kafka.
 */
import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import {
  appendToStream,
  createEventConsumer,
  createLagProbe,
  type EventLogBackend,
  journalGroupLag,
  type LagProbe,
  Relay,
  relayLag,
} from '@cas/eventlog'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { appliedCount, createAppliedTable, recordApplied } from './support/applied.ts'
import { createTestDatabase, type TestDatabase } from './support/database.ts'
import { createTestTopics, kafkaBrokers, uniqueGroupId } from './support/kafka.ts'
import { waitFor } from './support/wait.ts'

const backends = [
  { name: 'journal', available: true },
  { name: 'kafka', available: kafkaBrokers() !== null },
] as const

/** Times of commits as the events say them: from two minutes before the tests started. */
const BASE = Math.floor(Date.now() / 1000) * 1000 - 120_000
const committedAt = (offsetMs: number) => new Date(BASE + offsetMs)

for (const b of backends) {
  // Long waits are allowed (see `pending`): other test files' transactions hold the journal's readable bound.
  describe.skipIf(!b.available)(
    `a consumer group's progress: ${b.name} backend`,
    { timeout: 300_000 },
    () => {
      let db: TestDatabase
      let backend: EventLogBackend
      let relay: Relay | undefined
      const cleanups: (() => Promise<unknown>)[] = []

      beforeEach(async () => {
        db = await createTestDatabase()
        await createAppliedTable(db.pool)
        if (b.name === 'journal') {
          backend = { kind: 'journal', partitions: 4, pollIntervalMs: 10 }
        } else {
          const t = await createTestTopics(4)
          backend = { kind: 'kafka', kafka: t.kafka, topicPrefix: t.topicPrefix, sessionTimeoutMs: 6_000 }
          relay = new Relay({ pool: db.pool, kafka: t.kafka, topicPrefix: t.topicPrefix })
          cleanups.push(() => relay!.stop())
        }
      })
      afterEach(async () => {
        for (const c of cleanups.splice(0).reverse()) await c()
        await db.drop()
      })

      async function append(
        streamId: string,
        at: Date,
        streamType: 'conversation' | 'chatbot' = 'conversation',
      ) {
        await withTransaction(db.pool, (client) =>
          appendToStream(
            client,
            {
              streamType,
              streamId,
              orgId: randomUUID(),
              chatbotId: randomUUID(),
              expectedVersion: 'any',
              events: [{ type: 'test.happened', version: 1, payload: {} }],
            },
            { now: () => at },
          ),
        )
      }

      function probeOf(groupId: string): LagProbe {
        const probe = createLagProbe({
          pool: db.pool,
          eventLog: backend,
          groupId,
          streamTypes: ['conversation'],
        })
        cleanups.push(() => probe.close())
        return probe
      }

      /**
       * The probe's answer once it counts `events`. Journal readers see nothing committed after the oldest
       * transaction still running on the server began (the readable bound is cluster-wide), and the other
       * test files running meanwhile hold transactions of their own: the wait is long, the answer exact.
       */
      const pending = async (probe: LagProbe, events: number) => {
        let last: unknown
        try {
          return await waitFor(
            async () => {
              const progress = await probe.probe()
              last = progress
              // Kafka counts messages: an event the relay published twice (it may, after a failed send)
              // counts twice there until applied. The journal counts each event once.
              return (
                (b.name === 'journal' ? progress.events === events : progress.events >= events) && progress
              )
            },
            { what: `${events} events pending`, timeoutMs: 120_000 },
          )
        } catch (err) {
          throw new Error(`${(err as Error).message}; the last look: ${JSON.stringify(last)}`)
        }
      }

      it('counts the events committed and not applied, and says when the oldest was committed', async () => {
        const groupId = uniqueGroupId('progress')
        const probe = probeOf(groupId)
        // (New topics: until the broker's metadata has their leaders, a look may fail; the next one works.)
        expect(await waitFor(() => probe.probe(), { what: 'a first look' })).toEqual({
          events: 0,
          oldestPendingAt: null,
        })

        // Given three events committed two minutes ago, and one of a stream type the group does not read
        const [first, second] = [randomUUID(), randomUUID()]
        await append(first, committedAt(0))
        await append(second, committedAt(1_000))
        await append(first, committedAt(2_000))
        await append(randomUUID(), committedAt(-60_000), 'chatbot')

        // Then, nothing applied yet (in Kafka mode nothing relayed yet either), all three are pending (once
        // readable: a transaction of another test, still open, can hold the journal's readable end back)
        expect(await pending(probe, 3)).toEqual({ events: 3, oldestPendingAt: committedAt(0) })

        if (relay) {
          // When the relay publishes them: still pending, and as old (not "since they reached Kafka")
          await relay.start()
          await waitFor(async () => (await relayLag(db.pool)) === 0, {
            what: 'the events relayed',
            timeoutMs: 120_000,
          })
          // (Kafka holds at least the three: a send the relay retried after a partial failure holds them
          // twice, at-least-once, and the consumer drops the copies. A loaded CI machine saw 6.)
          const relayed = await probe.probe()
          expect(relayed.oldestPendingAt).toEqual(committedAt(0))
          expect(relayed.events).toBeGreaterThanOrEqual(3)
        }

        // When the group applies them
        const consumer = createEventConsumer(backend, {
          pool: db.pool,
          groupId,
          streamTypes: ['conversation'],
          handler: (records, client) => recordApplied(client, records),
        })
        cleanups.push(() => consumer.stop())
        await consumer.start()
        await waitFor(async () => (await probe.probe()).events === 0, {
          what: 'the group to catch up',
          timeoutMs: 120_000,
        })
        expect(await probe.probe()).toEqual({ events: 0, oldestPendingAt: null })
        // The checkpoint says when the last event applied was committed.
        const { rows } = await db.pool.query(
          'SELECT max(last_occurred_at) AS last FROM consumer_checkpoints WHERE group_id = $1',
          [groupId],
        )
        expect(rows[0].last).toEqual(committedAt(2_000))
      })

      it('counts an event committed behind a transaction still running, from when it was committed', async () => {
        const groupId = uniqueGroupId('held')
        await relay?.start()
        const probe = probeOf(groupId)
        await waitFor(() => probe.probe(), { what: 'a first look' })
        // Given a transaction with an id, running on: nobody reads past it (see journal.ts)
        const held = await db.pool.connect()
        try {
          await held.query('BEGIN')
          await held.query('SELECT pg_current_xact_id()')
          // When an event commits after it
          await append(randomUUID(), committedAt(0))
          // Then it is pending all the same, and since its commit: one look, nothing to wait for
          expect(await probe.probe()).toEqual({ events: 1, oldestPendingAt: committedAt(0) })
        } finally {
          await held.query('ROLLBACK')
          held.release()
        }
      })

      // (On the journal only: in Kafka mode the count is offsets, no scan.)
      if (b.name === 'journal')
        it('counts a backlog up to a limit, and still knows its oldest', async () => {
          const groupId = uniqueGroupId('capped')
          for (const offset of [0, 1_000, 2_000]) await append(randomUUID(), committedAt(offset))
          await pending(probeOf(groupId), 3)
          expect(await journalGroupLag(db.pool, groupId, 4, ['conversation'], 2)).toEqual({
            events: 2,
            oldestPendingAt: committedAt(0),
          })
        })

      it('is the same for every process of the group, and while none of them runs', async () => {
        // Given a group that applied the first event and stopped
        const groupId = uniqueGroupId('stopped')
        await relay?.start()
        await append(randomUUID(), committedAt(0))
        const consumer = createEventConsumer(backend, {
          pool: db.pool,
          groupId,
          streamTypes: ['conversation'],
          handler: (records, client) => recordApplied(client, records),
        })
        await consumer.start()
        // Applied, not merely not yet readable: a probe also says 0 while the journal's readable bound
        // (held back by other test files' transactions) still hides the event from everyone.
        await waitFor(
          async () => (await appliedCount(db.pool)) === 1 && (await probeOf(groupId).probe()).events === 0,
          { what: 'the first applied', timeoutMs: 120_000 },
        )
        await consumer.stop()
        // When more is committed while it is down
        await append(randomUUID(), committedAt(5_000))
        await append(randomUUID(), committedAt(6_000))
        if (relay)
          await waitFor(async () => (await relayLag(db.pool)) === 0, {
            what: 'relayed',
            timeoutMs: 120_000,
          })
        // Then two probes, as two processes would run them, both see it behind: from the first event not
        // applied on the journal; in Kafka, at their first look, from no later than that (what they know of
        // when it was committed: after the group's last event applied, or after the first in the log)
        for (const probe of [probeOf(groupId), probeOf(groupId)]) {
          const { events, oldestPendingAt } = await pending(probe, 2)
          if (b.name === 'journal') expect(events).toBe(2)
          else expect(events).toBeGreaterThanOrEqual(2)
          if (b.name === 'journal') expect(oldestPendingAt).toEqual(committedAt(5_000))
          else expect([committedAt(0), committedAt(5_000)]).toContainEqual(oldestPendingAt)
        }
      })
    },
  )
}
