import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { applyBatch, type JournalRecord, type SourcedRecord } from '@cas/eventlog'
import { journalConflictReadiness } from '@cas/platform'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { runJournalConflictsCommand } from './journal-conflicts-command.ts'

const source = { topic: 'cas-conversation-events', partition: 2 }

/** Events of one stream, at Kafka offsets, that no journal holds (as after a restore lost them). */
function lostEvents(streamId: string, chatbotId: string, offsets: number[]): SourcedRecord[] {
  return offsets.map((offset, i) => ({
    offset: String(offset),
    record: {
      id: randomUUID(),
      type: i === 0 ? 'conversation.started' : 'conversation.messages-captured',
      version: 1,
      occurredAt: new Date(Date.UTC(2026, 11, 1, 12, 0, offset)).toISOString(),
      orgId: randomUUID(),
      chatbotId,
      streamType: 'conversation',
      streamId,
      streamVersion: i + 1,
      position: String(1000 + offset),
      payload: { sealed: 'personal data' },
      metadata: {},
    } satisfies JournalRecord,
  }))
}

describe('npm run journal-conflicts', () => {
  let db: TestDatabase
  beforeEach(async () => {
    db = await createTestDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })

  async function run(...argv: string[]) {
    const out: string[] = []
    const err: string[] = []
    const code = await runJournalConflictsCommand(db.pool, argv, {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
    })
    return { code, out: out.join('\n'), err: err.join('\n') }
  }

  /** The real CLI, as `npm run journal-conflicts -- ...` runs it, on the test database. */
  function cli(...argv: string[]) {
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'services/projector/src/journal-conflicts-cli.ts', ...argv],
      {
        env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'warn', KAFKA_BROKERS: '' },
        encoding: 'utf8',
        timeout: 60_000,
      },
    )
    return { code: result.status, out: result.stdout, err: result.stderr }
  }

  /** Two consumer groups read the same lost events and leave them out, as the projector and analysis do. */
  async function leftOut(batch: readonly SourcedRecord[], groups = ['projector', 'analysis']) {
    for (const groupId of groups) {
      const outcome = await applyBatch(db.pool, groupId, source, batch, async () => {}, {
        verifyInJournal: true,
      })
      expect(outcome.notInJournal).toHaveLength(batch.length)
    }
  }

  const readiness = () => journalConflictReadiness(db.pool).detail!()

  it('lists each left-out event once, whatever the groups, without its payload, as a table, JSON or CSV', async () => {
    expect((await run('list')).out).toBe('No events left out as not in the journal.')
    const chatbotId = randomUUID()
    const conversation = randomUUID()
    const batch = lostEvents(conversation, chatbotId, [7, 8, 9])
    await leftOut(batch)

    const json = await run('list', '--format', 'json')
    expect(json.code).toBe(0)
    const listed = JSON.parse(json.out)
    expect(listed).toEqual(
      batch.map((b) => ({
        eventId: b.record.id,
        eventType: b.record.type,
        streamType: 'conversation',
        streamId: conversation,
        chatbotId,
        streamVersion: b.record.streamVersion,
        topic: source.topic,
        partition: source.partition,
        offset: b.offset,
        groups: ['analysis', 'projector'],
        leftOutAt: expect.any(String),
        acknowledgedAt: null,
      })),
    )
    expect(json.out).not.toContain('personal data')

    const table = (await run('list')).out.split('\n')
    expect(table).toHaveLength(1 + 3)
    expect(table[0]).toMatch(/^eventId\s+type\s+streamType\s+streamId\s+chatbotId\s+streamVersion\s+topic/)
    expect(table[1]).toContain(batch[0]!.record.id)
    expect(table[1]).toContain('conversation.started')

    // The real CLI, CSV: a header and one row per event.
    const csv = cli('list', '--format', 'csv')
    expect(csv.code, csv.err).toBe(0)
    const rows = csv.out.trimEnd().split('\n')
    expect(rows[0]).toBe(
      'eventId,type,streamType,streamId,chatbotId,streamVersion,topic,partition,offset,groups,leftOutAt,acknowledgedAt',
    )
    expect(rows.slice(1).map((r) => r.split(',').slice(0, 10))).toEqual(
      batch.map((b) => [
        b.record.id,
        b.record.type,
        'conversation',
        conversation,
        chatbotId,
        String(b.record.streamVersion),
        source.topic,
        String(source.partition),
        b.offset,
        'analysis projector',
      ]),
    )
    expect(csv.out).not.toContain('personal data')
  })

  it('acknowledges events: /readyz stops counting them and its problem clears; twice changes nothing', async () => {
    const [first, second] = [
      lostEvents(randomUUID(), randomUUID(), [1, 2]),
      lostEvents(randomUUID(), randomUUID(), [3]),
    ]
    await leftOut([...first!, ...second!])
    expect(await readiness()).toEqual({
      total: 6,
      byGroup: { analysis: 3, projector: 3 },
      problem: expect.stringContaining('docs/operations.md#backups'),
    })

    const one = await run('acknowledge', first![0]!.record.id.toUpperCase(), first![1]!.record.id)
    expect(one).toEqual({ code: 0, out: 'Acknowledged 2 events left out as not in the journal.', err: '' })
    expect(await readiness()).toEqual({
      total: 2,
      byGroup: { analysis: 1, projector: 1 },
      problem: expect.any(String),
    })
    expect((await run('acknowledge', first![0]!.record.id)).out).toBe(
      'Acknowledged 0 events left out as not in the journal.',
    )

    const all = cli('acknowledge', '--all')
    expect(all.code, all.err).toBe(0)
    // It said "Acknowledged 1 events".
    expect(all.out).toContain('Acknowledged 1 event left out as not in the journal.')
    expect(await readiness()).toEqual({ total: 0, byGroup: {} })
    const listed = JSON.parse((await run('list', '--format', 'json')).out) as {
      acknowledgedAt: string | null
    }[]
    expect(listed).toHaveLength(3)
    expect(listed.every((c) => c.acknowledgedAt !== null)).toBe(true)
  })

  it('an event acknowledged comes in acknowledged for a group that leaves it out later', async () => {
    const batch = lostEvents(randomUUID(), randomUUID(), [4])
    await leftOut(batch, ['projector'])
    expect((await run('acknowledge', '--all')).code).toBe(0)
    // A second group (the analysis, behind) reads past the same event afterwards.
    await leftOut(batch, ['analysis'])
    expect(await readiness()).toEqual({ total: 0, byGroup: {} })
    const [listed] = JSON.parse((await run('list', '--format', 'json')).out)
    expect(listed).toMatchObject({ groups: ['analysis', 'projector'], acknowledgedAt: expect.any(String) })
  })

  it('an id no group left out is an error that acknowledges nothing; bad usage exits 64', async () => {
    const batch = lostEvents(randomUUID(), randomUUID(), [5])
    await leftOut(batch)
    const unknown = randomUUID()
    const refused = cli('acknowledge', batch[0]!.record.id, unknown)
    expect(refused.code).toBe(1)
    expect(refused.err).toContain(`No consumer group left out event ${unknown}: nothing acknowledged.`)
    expect(await readiness()).toMatchObject({ total: 2 })

    for (const argv of [
      [],
      ['nonsense'],
      ['acknowledge'],
      ['acknowledge', '--all', batch[0]!.record.id],
      ['acknowledge', 'not-a-uuid'],
      ['list', '--format', 'xml'],
      ['list', '--bogus'],
      // Each command's options were accepted by the other and ignored.
      ['list', '--all'],
      ['acknowledge', '--format', 'csv', batch[0]!.record.id],
      ['acknowledge', '--all', '--format', 'json'],
    ]) {
      const usage = await run(...argv)
      expect(usage.code, argv.join(' ')).toBe(64)
      expect(usage.err).toContain('usage: npm run journal-conflicts -- <command>')
      expect(usage.out).toBe('')
    }
    const usage = cli('acknowledge')
    expect(usage.code).toBe(64)
    expect(usage.err).toContain('acknowledge takes event ids, or --all')
    expect(await readiness()).toMatchObject({ total: 2 })
  })
})
