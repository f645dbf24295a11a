/**
 * The consumer pipeline's runner: each outcome of a step (ok, drop, retry, deadLetter) does what it says,
 * run by a real journal consumer over real events, with the drops counted by reason in Prometheus and
 * the dead letters in the dead-letter store.
 */
import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { Metrics } from '@cas/metrics'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { deadLetter, drop, eachEvent, ok, pipeline, retry, type StepResult } from './consumer-pipeline.ts'
import { listDeadLetters } from './dead-letters.ts'
import { createEventConsumer } from './event-log.ts'
import { appendToStream } from './journal.ts'
import { JOURNAL_TOPIC } from './journal-consumer.ts'
import type { JournalRecord } from './records.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

/** Appends one stream of events, whose payloads say what the test's step is to do with each. */
async function appendEvents(outcomes: readonly string[]): Promise<readonly JournalRecord[]> {
  const { records } = await withTransaction(db.pool, (c) =>
    appendToStream(c, {
      streamType: 'conversation',
      streamId: randomUUID(),
      orgId: randomUUID(),
      chatbotId: randomUUID(),
      expectedVersion: 0,
      events: outcomes.map((outcome) => ({ type: 'test.happened', version: 1, payload: { outcome } })),
    }),
  )
  return records
}

/**
 * A consumer of a new group whose checkpoint is just before `first`, running `step` and then a handle
 * step that records what reached it; with its metrics.
 */
async function consume(first: JournalRecord, step: (record: JournalRecord) => StepResult<JournalRecord>) {
  const groupId = `pipeline-${randomUUID()}`
  const handled: string[] = []
  const steps = pipeline({ consumer: groupId })
    .pipe(eachEvent((record) => step(record)))
    .pipe(async (items, client) => {
      await client.query('SELECT 1')
      for (const item of items) handled.push((item.value.payload as { outcome: string }).outcome)
      return items.map(() => ok(undefined))
    })
  const consumer = createEventConsumer(
    { kind: 'journal', partitions: 1, pollIntervalMs: 5 },
    {
      pool: db.pool,
      groupId,
      streamTypes: ['conversation'],
      maxAttempts: 2,
      ...steps.consumerOptions(),
    },
  )
  await db.pool.query(
    'INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset) VALUES ($1, $2, 0, $3)',
    [groupId, JOURNAL_TOPIC, (BigInt(first.position) - 1n).toString()],
  )
  const metrics = new Metrics()
  metrics.observeConsumer(consumer)
  await consumer.start()
  return { groupId, consumer, handled, metrics }
}

const outcomeOf = (record: JournalRecord) => (record.payload as { outcome: string }).outcome

describe('the consumer pipeline’s runner', () => {
  it('passes ok events on, and counts a drop by consumer and reason in Prometheus', async () => {
    const records = await appendEvents(['keep', 'drop', 'keep', 'drop'])
    const { groupId, consumer, handled, metrics } = await consume(records[0]!, (record) =>
      outcomeOf(record) === 'drop' ? drop('not_wanted', 'the test said so') : ok(record),
    )
    try {
      await waitFor(() => consumer.stats.applied >= 4, { what: 'the four events applied' })
      expect(handled).toEqual(['keep', 'keep'])
      expect(consumer.stats.droppedEvents).toEqual({ not_wanted: 2 })
      const { body } = await metrics.render()
      expect(body).toContain(`cas_consumer_dropped_events_total{group="${groupId}",reason="not_wanted"} 2`)
    } finally {
      await consumer.stop()
    }
  })

  it('retries the whole batch on `retry`, never setting anything aside, until the step lets it through', async () => {
    const records = await appendEvents(['first', 'flaky', 'last'])
    let refusals = 3
    const { groupId, consumer, handled } = await consume(records[0]!, (record) => {
      if (outcomeOf(record) === 'flaky' && refusals > 0) {
        refusals--
        return retry('not yet')
      }
      return ok(record)
    })
    try {
      await waitFor(() => handled.length === 3, { what: 'the batch applied' })
      // More failures than maxAttempts (2), and still nothing dead-lettered: a retry is transient.
      expect(consumer.stats.errors).toBe(3)
      expect(handled).toEqual(['first', 'flaky', 'last'])
      expect(consumer.stats.deadLettered).toBe(0)
      expect(await listDeadLetters(db.pool, { groupId })).toEqual([])
    } finally {
      await consumer.stop()
    }
  })

  it('sets a `deadLetter` event aside in the dead-letter store with its reason, and applies the rest', async () => {
    const records = await appendEvents(['first', 'poison', 'last'])
    const { groupId, consumer, handled, metrics } = await consume(records[0]!, (record) =>
      outcomeOf(record) === 'poison' ? deadLetter('cannot be applied') : ok(record),
    )
    try {
      await waitFor(() => consumer.stats.deadLettered === 1 && handled.length === 2, {
        what: 'the poison set aside and the rest applied',
      })
      expect(handled).toEqual(['first', 'last'])
      const letters = await listDeadLetters(db.pool, { groupId })
      expect(letters.map((l) => [l.eventId, l.error, l.attempts])).toEqual([
        [records[1]!.id, 'cannot be applied', 1],
      ])
      const { body } = await metrics.render()
      expect(body).toContain(`cas_consumer_dead_lettered_events_total{group="${groupId}"} 1`)
    } finally {
      await consumer.stop()
    }
  })
})
