/**
 * A chatbot's topic rows are written by two kinds of batches at once: its topic events (in event order)
 * and the results naming its topics (in id order). Each takes the chatbot's rm_topics lock first
 * (topics.ts), so they wait for each other instead of deadlocking. Shown by doing it, on a real Postgres:
 * a batch holding one topic row, another batch writing both, then the first writing the second row.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { waitFor } from '../../../../test/support/wait.ts'
import { TopicChanges, type TopicEvent } from './topics.ts'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await db?.drop()
})

const at = '2026-11-29T10:00:00.000Z'

function discovered(orgId: string, chatbotId: string, topicId: string, label: string): TopicEvent {
  return {
    type: 'analysis.topic-discovered',
    orgId,
    chatbotId,
    occurredAt: at,
    payload: { topicId, label, keywords: [label], configured: false },
  } as unknown as TopicEvent
}

/** A chatbot's rm_topics rows as committed, by id. */
async function topicRows(chatbotId: string): Promise<{ id: string; label: string }[]> {
  const { rows } = await db.pool.query<{ id: string; label: string }>(
    'SELECT id, label FROM rm_topics WHERE chatbot_id = $1 ORDER BY id',
    [chatbotId],
  )
  return rows
}

describe('rm_topics under batches applied at once (topics.ts)', () => {
  it("never deadlocks a chatbot's topic events with the results naming its topics", async () => {
    const orgId = randomUUID()
    const chatbotId = randomUUID()
    const [first, second] = ['t-1', 't-2']
    const events = await db.pool.connect()
    const results = await db.pool.connect()
    try {
      // The topic events' batch: the second topic found first (event order), its transaction left open.
      await events.query('BEGIN')
      const found = new TopicChanges()
      found.add(discovered(orgId, chatbotId, second, 'second'))
      await found.flush(events)

      // The results' batch: both topics named, written in id order; it must wait for the first batch.
      await results.query('BEGIN')
      const named = new TopicChanges()
      named.addNamed({ orgId, chatbotId, occurredAt: at }, [
        { id: first, label: 'first' },
        { id: second, label: 'second' },
      ])
      const pid = (await results.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
      const writing = named.flush(results).then(
        () => 'written',
        (err: Error & { code?: string }) => err.code ?? err.message,
      )
      await waitFor(
        async () =>
          (
            await db.pool.query<{ waiting: boolean }>(
              "SELECT wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE pid = $1",
              [pid],
            )
          ).rows[0]?.waiting,
        { what: "the results' batch waiting for a lock" },
      )

      // The topic events' batch goes on to the first topic. Had the results' batch taken the first
      // topic's row before waiting, each would now wait for the other: a deadlock (40P01) failing one.
      const more = new TopicChanges()
      more.add(discovered(orgId, chatbotId, first, 'first'))
      await more.flush(events)
      await events.query('COMMIT')
      expect(await writing).toBe('written')
      await results.query('COMMIT')
    } finally {
      await events.query('ROLLBACK').catch(() => {})
      await results.query('ROLLBACK').catch(() => {})
      events.release()
      results.release()
    }
    const rows = await topicRows(chatbotId)
    // The topic events' labels stand: the results' stand-ins found the rows there.
    expect(rows).toEqual([
      { id: first, label: 'first' },
      { id: second, label: 'second' },
    ])
  })

  it("lets the results naming a chatbot's existing topics through while its topic events are being written", async () => {
    const orgId = randomUUID()
    const chatbotId = randomUUID()
    const setup = new TopicChanges()
    setup.add(discovered(orgId, chatbotId, 't-1', 'first'))
    setup.add(discovered(orgId, chatbotId, 't-2', 'second'))
    const client = await db.pool.connect()
    try {
      await setup.flush(client)
    } finally {
      client.release()
    }
    const events = await db.pool.connect()
    const results = await db.pool.connect()
    try {
      // A topic events' batch holds the chatbot's lock, its transaction left open.
      await events.query('BEGIN')
      const found = new TopicChanges()
      found.add(discovered(orgId, chatbotId, 't-3', 'third'))
      await found.flush(events)

      // A results' batch naming only topics already there needs no stand-in: it must not wait for the lock
      // (it would fail here on the lock timeout if it did). A topic not there yet would still wait.
      await results.query('BEGIN')
      await results.query("SET LOCAL lock_timeout = '3s'")
      const named = new TopicChanges()
      named.addNamed({ orgId, chatbotId, occurredAt: at }, [
        { id: 't-2', label: 'stand-in 2' },
        { id: 't-1', label: 'stand-in 1' },
      ])
      await named.flush(results)
      await results.query('COMMIT')

      const waiting = new TopicChanges()
      waiting.addNamed({ orgId, chatbotId, occurredAt: at }, [{ id: 't-4', label: 'fourth' }])
      await results.query('BEGIN')
      await results.query("SET LOCAL lock_timeout = '200ms'")
      const outcome = await waiting.flush(results).then(
        () => 'written',
        (err: Error & { code?: string }) => err.code ?? err.message,
      )
      await results.query('ROLLBACK')
      expect(outcome).toBe('55P03') // lock_not_available: the stand-in for a new topic waits for the lock
      await events.query('COMMIT')
    } finally {
      await events.query('ROLLBACK').catch(() => {})
      await results.query('ROLLBACK').catch(() => {})
      events.release()
      results.release()
    }
    const rows = await topicRows(chatbotId)
    expect(rows).toEqual([
      { id: 't-1', label: 'first' },
      { id: 't-2', label: 'second' },
      { id: 't-3', label: 'third' },
    ])
  })
})
