/**
 * Restoring an older backup of Postgres in Kafka mode under the same topics (bench/FINDINGS.md, trial4;
 * docs/operations.md, Backups). Regression: the topics still held the events committed after the backup,
 * which the restored journal had lost; the consumers applied them, and the journal's next events, which
 * took the same stream versions, were skipped as duplicates: acknowledged events never applied, with
 * nothing to say so. Kafka-only (the journal backend reads the journal it restored).
 */
import { randomUUID } from 'node:crypto'
import {
  acknowledgeJournalConflicts,
  countJournalConflicts,
  listJournalConflicts,
  NOT_IN_JOURNAL,
  Relay,
  republishJournal,
} from '@cas/eventlog'
import { journalConflictReadiness } from '@cas/platform'
import type { Pool } from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  appendWorkload,
  appliedCount,
  createAppliedTable,
  expectExactlyOnceInStreamOrder,
} from './support/applied.ts'
import {
  copyTestDatabase,
  createTestDatabase,
  openTestDatabase,
  type TestDatabase,
} from './support/database.ts'
import {
  createTestTopics,
  kafkaBrokers,
  startRecordingConsumer,
  startTestRelay,
  type TestKafka,
  uniqueGroupId,
} from './support/kafka.ts'
import { waitFor } from './support/wait.ts'

describe.skipIf(kafkaBrokers() === null)('a backup of Postgres restored under the same topics', () => {
  let t: TestKafka
  const cleanups: (() => Promise<unknown>)[] = []

  beforeEach(async () => {
    t = await createTestTopics(4)
  })
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })

  /** A relay and a consumer of `groupId` on `pool`, as the services start them; `stop` stops both. */
  async function startServices(pool: Pool, groupId: string, relays = 1) {
    const started: Relay[] = []
    for (let i = 0; i < relays; i++) started.push(await startTestRelay(t, pool, { batchSize: 20 }))
    const consumer = await startRecordingConsumer(t, pool, { groupId, maxBatchSize: 50 })
    let stopped = false
    const stop = async () => {
      if (stopped) return
      stopped = true
      await consumer.stop()
      for (const r of started) await r.stop()
    }
    cleanups.push(stop)
    return { relays: started, consumer, stop }
  }

  /** Journal events of the database that the consumer has not applied. */
  async function unapplied(pool: Pool): Promise<number> {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM event_journal j
        WHERE NOT EXISTS (SELECT 1 FROM test_applied a WHERE a.event_id = j.event_id)`,
    )
    return rows[0]!.n
  }

  async function journalIds(pool: Pool): Promise<string[]> {
    const { rows } = await pool.query<{ event_id: string }>('SELECT event_id FROM event_journal')
    return rows.map((r) => r.event_id)
  }

  async function allApplied(db: TestDatabase, what: string) {
    await waitFor(async () => (await unapplied(db.pool)) === 0, { timeoutMs: 60_000, what })
  }

  /**
   * The disaster: events published and applied, a backup (a copy of the database, every service stopped),
   * more events published and applied on the original (an ordinary restart, which leaves nothing out),
   * then the original lost. Returns the backup, restored, and the ids of the events it lost.
   */
  async function restoredBackup(groupId: string, streams: string[]) {
    const original = await createTestDatabase()
    await createAppliedTable(original.pool)

    const before = await startServices(original.pool, groupId)
    await appendWorkload(original.pool, { streams: 8, streamIds: streams, total: 120 })
    await allApplied(original, 'the events before the backup applied')
    await before.stop()

    await original.readerPool.end()
    await original.pool.end()
    const restored = await copyTestDatabase(original.name)
    cleanups.push(() => restored.drop())
    const live = openTestDatabase(original.name)

    const after = await startServices(live.pool, groupId)
    const newAfter = Array.from({ length: 3 }, () => randomUUID())
    await appendWorkload(live.pool, { streams: 11, streamIds: [...streams, ...newAfter], total: 80 })
    await allApplied(live, 'the events after the backup applied')
    await expectExactlyOnceInStreamOrder(live.pool)
    expect(after.consumer.stats.droppedEvents).toEqual({})
    expect(await countJournalConflicts(live.pool)).toEqual({})
    await after.stop()
    const backedUp = new Set(await journalIds(restored.pool))
    const lost = (await journalIds(live.pool)).filter((id) => !backedUp.has(id))
    expect(lost).toHaveLength(80)
    await live.drop()
    return { restored, lost }
  }

  it('applies every event the restored journal commits, once, and leaves out those it lost, listed', async () => {
    const groupId = uniqueGroupId('restore')
    const streams = Array.from({ length: 8 }, () => randomUUID())
    const { restored, lost } = await restoredBackup(groupId, streams)

    // The services started on the backup with the same topics and groups, and new events committed to
    // the streams the lost ones were of, and to new ones.
    const restarted = await startServices(restored.pool, groupId)
    await appendWorkload(restored.pool, {
      streams: 10,
      streamIds: [...streams, randomUUID(), randomUUID()],
      total: 90,
    })
    await allApplied(restored, 'every event of the restored journal applied')
    // Every lost event that Kafka holds is left out and listed, once: none applied.
    await waitFor(async () => (await countJournalConflicts(restored.pool))[groupId] === 80, {
      what: 'the 80 lost events listed',
    })
    await expectExactlyOnceInStreamOrder(restored.pool)
    expect(await appliedCount(restored.pool)).toBe(120 + 90)
    const { rows: listed } = await restored.pool.query<{ event_id: string }>(
      'SELECT event_id FROM journal_conflicts WHERE group_id = $1',
      [groupId],
    )
    expect(listed.map((r) => r.event_id).sort()).toEqual(lost.sort())
    expect(restarted.consumer.stats.droppedEvents).toEqual({ [NOT_IN_JOURNAL]: 80 })
    // And /readyz says so.
    expect(await journalConflictReadiness(restored.pool).detail!()).toEqual({
      total: 80,
      byGroup: { [groupId]: 80 },
      problem: expect.stringContaining('docs/operations.md#backups'),
    })
    // The operator lists them (npm run journal-conflicts), once each, and acknowledges them: /readyz's
    // problem clears, the counter keeps its count.
    const conflicts = await listJournalConflicts(restored.pool)
    expect(conflicts.map((c) => c.eventId).sort()).toEqual(lost.sort())
    expect(new Set(conflicts.map((c) => c.eventType))).toEqual(new Set(['test.happened']))
    expect(await acknowledgeJournalConflicts(restored.pool, { all: true })).toEqual({
      ok: true,
      acknowledged: 80,
    })
    expect(await journalConflictReadiness(restored.pool).detail!()).toEqual({ total: 0, byGroup: {} })
    expect(restarted.consumer.stats.droppedEvents).toEqual({ [NOT_IN_JOURNAL]: 80 })
  })

  it('on new topics, after npm run republish, they hold the whole journal and nothing is left out', async () => {
    const groupId = uniqueGroupId('restore-new')
    const streams = Array.from({ length: 8 }, () => randomUUID())
    const { restored } = await restoredBackup(groupId, streams)
    // docs/operations.md, Backups, step 3: `npm run republish` (refused while a relay runs), then a new
    // KAFKA_TOPIC_PREFIX.
    const running = new Relay({ pool: restored.pool, kafka: t.kafka, topicPrefix: t.topicPrefix })
    await running.start()
    cleanups.push(() => running.stop())
    await waitFor(() => running.stats.isLeader, { what: 'the relay to lead' })
    expect(await republishJournal(restored.pool)).toBeUndefined()
    await running.stop()
    expect(await republishJournal(restored.pool)).toEqual({ events: 120 })
    t = await createTestTopics(4)
    const restarted = await startServices(restored.pool, groupId)
    await appendWorkload(restored.pool, { streams: 10, streamIds: [...streams, randomUUID()], total: 90 })
    await allApplied(restored, 'every event of the restored journal applied')
    await waitFor(() => restarted.relays[0]!.stats.published >= 120 + 90, {
      what: 'the whole journal published',
    })
    await expectExactlyOnceInStreamOrder(restored.pool)
    // What the consumers had applied before the backup, read again from the new topics: skipped.
    await waitFor(() => restarted.consumer.stats.duplicates >= 120, { what: 'the backed-up events skipped' })
    expect(restarted.consumer.stats.droppedEvents).toEqual({})
    expect(await countJournalConflicts(restored.pool)).toEqual({})
  })

  it("a relay failover under load (the leader's lock connection killed) leaves nothing out", async () => {
    const db = await createTestDatabase()
    cleanups.push(() => db.drop())
    await createAppliedTable(db.pool)
    const services = await startServices(db.pool, uniqueGroupId('failover'), 2)
    const leader = () => services.relays.find((r) => r.stats.isLeader)
    await waitFor(() => leader() !== undefined, { what: 'a relay to lead' })
    const writing = appendWorkload(db.pool, { streams: 12, total: 400, concurrency: 4 })
    await waitFor(() => (leader()?.stats.published ?? 0) >= 40, { what: 'the leader to publish' })
    // The leader's lock connection dies: the standby (or the leader again) leads from the checkpoint.
    const { rows } = await db.pool.query<{ pid: number }>(
      `SELECT pid FROM pg_locks
        WHERE locktype = 'advisory' AND classid = x'72656c61'::int AND objid = 1 AND granted`,
    )
    await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid])
    await writing
    await waitFor(async () => (await unapplied(db.pool)) === 0, { timeoutMs: 60_000, what: 'all applied' })
    await expectExactlyOnceInStreamOrder(db.pool)
    expect(services.consumer.stats.droppedEvents).toEqual({})
    expect(await countJournalConflicts(db.pool)).toEqual({})
  })
})
