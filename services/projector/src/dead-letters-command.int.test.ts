import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { appendToStream, createEventConsumer, type JournalRecord } from '@cas/eventlog'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { runDeadLetterCommand } from './dead-letters-command.ts'

describe('npm run dead-letters', () => {
  let db: TestDatabase
  const cleanups: (() => Promise<unknown>)[] = []
  beforeEach(async () => {
    db = await createTestDatabase()
    await db.pool.query('CREATE TABLE test_applied (event_id uuid PRIMARY KEY)')
  })
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
    await db.drop()
  })

  async function run(...argv: string[]) {
    const out: string[] = []
    const err: string[] = []
    const code = await runDeadLetterCommand(
      db.pool,
      argv,
      { out: (l) => out.push(l), err: (l) => err.push(l) },
      { timeoutMs: 20_000, pollMs: 20 },
    )
    return { code, out: out.join('\n'), err: err.join('\n') }
  }

  /** A consumer that cannot apply events whose payload says `poison` until `fixed` is set. */
  async function startConsumer(groupId: string, state: { fixed: boolean }) {
    const consumer = createEventConsumer(
      { kind: 'journal', partitions: 2, pollIntervalMs: 10 },
      {
        pool: db.pool,
        groupId,
        streamTypes: ['conversation'],
        maxAttempts: 2,
        redriveIntervalMs: 50,
        handler: async (records, client) => {
          const poisoned = (r: JournalRecord) => (r.payload as { poison?: boolean }).poison === true
          if (!state.fixed && records.some(poisoned)) throw new SyntaxError('Unexpected token in the payload')
          await client.query('INSERT INTO test_applied SELECT unnest($1::uuid[])', [records.map((r) => r.id)])
        },
      },
    )
    await consumer.start()
    cleanups.push(() => consumer.stop())
    return consumer
  }

  async function appendPoison(): Promise<string> {
    return withTransaction(db.pool, async (client) => {
      const { records } = await appendToStream(client, {
        streamType: 'conversation',
        streamId: randomUUID(),
        orgId: randomUUID(),
        chatbotId: randomUUID(),
        expectedVersion: 0,
        events: [{ type: 'test.happened', version: 1, payload: { poison: true } }],
      })
      return records[0]!.id
    })
  }

  it('lists, shows, re-drives after a fix, and discards the events a consumer set aside', async () => {
    expect((await run('list')).out).toBe('No dead letters.')
    const state = { fixed: false }
    await startConsumer('cli-group', state)
    const [first, second] = [await appendPoison(), await appendPoison()]
    await waitFor(async () => (await run('list', '--json')).out.includes(second), {
      what: 'two dead letters',
    })

    const listed = await run('list')
    expect(listed.code).toBe(0)
    const lines = listed.out.split('\n')
    expect(lines[0]).toMatch(
      /^id\s+group\s+event\s+stream\s+chatbot\s+attempts\s+set aside at\s+state\s+error$/,
    )
    expect(lines).toHaveLength(3)
    expect(lines[1]).toMatch(/cli-group\s+test\.happened .* 2 .*Unexpected token in the payload/)
    const letters = JSON.parse((await run('list', '--json')).out) as { id: string; eventId: string }[]
    expect(letters.map((l) => l.eventId)).toEqual([first, second])

    const shown = await run('show', letters[0]!.id)
    expect(JSON.parse(shown.out)).toMatchObject({
      eventId: first,
      record: { id: first, payload: { poison: true } },
    })
    expect(await run('show', '999999')).toMatchObject({ code: 1, err: 'No dead letter 999999.' })

    // Re-driven before the fix: it fails again, says so, and stays.
    const again = await run('redrive', letters[0]!.id)
    expect(again.code).toBe(1)
    expect(again.out).toMatch(/0 applied, 1 failed again, 0 waiting/)
    expect(again.out).toContain('Unexpected token in the payload')

    // After the fix: applied once, and gone.
    state.fixed = true
    const redriven = await run('redrive', letters[0]!.id)
    expect(redriven).toMatchObject({ code: 0 })
    expect(redriven.out).toMatch(/1 applied, 0 failed again, 0 waiting/)
    const { rows } = await db.pool.query('SELECT event_id FROM test_applied WHERE event_id = $1', [first])
    expect(rows).toHaveLength(1)

    expect((await run('discard', '--all')).out).toBe('Discarded 1 dead letters.')
    expect((await run('list')).out).toBe('No dead letters.')
    const { rows: discarded } = await db.pool.query('SELECT 1 FROM test_applied WHERE event_id = $1', [
      second,
    ])
    expect(discarded).toEqual([])
  })

  it('says when no running consumer took a re-drive up', async () => {
    const state = { fixed: false }
    const consumer = await startConsumer('stopped-group', state)
    await appendPoison()
    await waitFor(async () => (await run('list', '--json')).out.includes('stopped-group'), {
      what: 'a dead letter',
    })
    await consumer.stop()
    const out: string[] = []
    const code = await runDeadLetterCommand(
      db.pool,
      ['redrive', '--all'],
      { out: (l) => out.push(l), err: () => {} },
      { timeoutMs: 300, pollMs: 20 },
    )
    expect(code).toBe(1)
    expect(out.join('\n')).toMatch(
      /0 applied, 0 failed again, 1 waiting[\s\S]*stopped-group: is the service running\?/,
    )
  })

  it('refuses what it does not understand, with the usage', async () => {
    for (const argv of [
      [],
      ['frobnicate'],
      ['show'],
      ['redrive'],
      ['discard', 'x1'],
      ['redrive', '1', '--all'],
    ]) {
      const result = await run(...argv)
      expect(result.code, argv.join(' ')).toBe(64)
      expect(result.err, argv.join(' ')).toContain('usage: npm run dead-letters')
    }
  })
})
