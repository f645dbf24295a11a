/**
 * Message rows go to Postgres as one JSON document of column arrays, each row's topics an array
 * literal: topic ids with quotes, backslashes, commas and braces (key phrases are ids too) must come
 * back as they were, on the insert path (new messages) and the upsert path (results for stored ones).
 *
 * Run on the test run's server (the embedded PostgreSQL 18, where the upserts return the stored rows,
 * RETURNING OLD) and on the oldest PostgreSQL before 18 this machine has (Debian's, under
 * /usr/lib/postgresql: .ci/run installs it), where a statement locks and reads them first: DATABASE_URL may
 * name any PostgreSQL 14+ (docs/configuration.md).
 */
import { randomUUID } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {
  createPool,
  migrate,
  type PostgresBinaries,
  startEmbeddedPostgres,
  withDatabase,
  withTransaction,
} from '@cas/db'
import type { JournalRecord } from '@cas/eventlog'
import type { EventPayload, EventType } from '@cas/events'
import { dataKeyFor } from '@cas/keyring'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase } from '../../../../test/support/database.ts'
import { testKeyring } from '../../../../test/support/keyring.ts'
import { sealedRecord } from '../../test/sealed-record.ts'
import { applyToReadModels } from './apply.ts'

/** The oldest PostgreSQL 14 … 17 installed under /usr/lib/postgresql (Debian's layout), if any. */
function olderPostgres(): PostgresBinaries | undefined {
  const base = '/usr/lib/postgresql'
  if (!existsSync(base)) return undefined
  const majors = readdirSync(base)
    .map(Number)
    .filter((major) => Number.isInteger(major) && major >= 14 && major < 18)
    .sort((a, b) => a - b)
  for (const major of majors) {
    const root = path.join(base, String(major))
    const binaries = {
      root,
      initdb: path.join(root, 'bin', 'initdb'),
      postgres: path.join(root, 'bin', 'postgres'),
      version: String(major),
    }
    if (existsSync(binaries.initdb) && existsSync(binaries.postgres)) return binaries
  }
  return undefined
}
const older = olderPostgres()
// CI installs one (.ci/run): there the older server's tests never go missing.
if (process.env.CI && older === undefined) {
  throw new Error("no PostgreSQL before 18 under /usr/lib/postgresql: .ci/run installs Debian's postgresql")
}

interface Server {
  readonly pool: pg.Pool
  close(): Promise<void>
}

async function testRunServer(): Promise<Server> {
  const db = await createTestDatabase()
  return { pool: db.pool, close: () => db.drop() }
}

async function olderServer(binaries: PostgresBinaries): Promise<Server> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'cas-pg-older-'))
  // Postgres runs as its own user when we are root: it must be able to reach its data directory.
  await chmod(scratch, 0o755)
  const server = await startEmbeddedPostgres({
    dataDir: path.join(scratch, 'postgres'),
    binaries,
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
  })
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  await admin.query('CREATE DATABASE cas')
  await admin.end()
  const url = withDatabase(server.url, 'cas')
  await migrate(url)
  const pool = createPool(url, { max: 5, applicationName: 'test' })
  return {
    pool,
    async close() {
      await pool.end()
      await server.stop()
      await rm(scratch, { recursive: true, force: true })
    },
  }
}

const servers: { name: string; open: () => Promise<Server>; returningOld: boolean }[] = [
  { name: "the test run's PostgreSQL 18", open: testRunServer, returningOld: true },
]
if (older) {
  const binaries = older
  servers.push({
    name: `PostgreSQL ${binaries.version} (${binaries.root})`,
    open: () => olderServer(binaries),
    returningOld: false,
  })
}

describe.each(servers)('message rows on $name', ({ open, returningOld }) => {
  const orgId = randomUUID()
  const chatbotId = randomUUID()
  let key: Buffer
  let position = 1_000n

  let server: Server
  beforeAll(async () => {
    server = await open()
    key = await dataKeyFor(server.pool, testKeyring, chatbotId, orgId)
  }, 120_000)
  afterAll(async () => {
    await server?.close()
  })

  function record<T extends EventType>(
    streamType: 'conversation' | 'analysis',
    streamId: string,
    streamVersion: number,
    type: T,
    payload: EventPayload<T>,
  ): JournalRecord {
    position += 65_536n
    return sealedRecord(
      { key, orgId, chatbotId, streamType, streamId, streamVersion, position },
      type,
      payload,
    )
  }

  const TOPICS = ['say "hi"', 'back\\slash', 'a,b', '{x}', 'NULL', "can't log in", 'é ü']

  function conversation() {
    const id = randomUUID()
    return {
      id,
      capture: record('conversation', id, 1, 'conversation.messages-captured', {
        messages: [{ id: 'm1', role: 'user', content: 'hello', sentAt: '2026-11-20T12:00:00.000Z' }],
        receivedAt: '2026-11-20T12:00:00.000Z',
        analysisRequested: true,
      }),
      result: record('analysis', id, 1, 'analysis.messages-analyzed', {
        analyzer: { name: 'test', version: '1' },
        signalsDecided: true,
        results: [
          {
            messageId: 'm1',
            sentiment: { score: 0.5, label: 'positive' },
            topics: TOPICS.map((t) => ({ id: t, label: t })),
          },
        ],
      }),
    }
  }

  async function apply(records: JournalRecord[]) {
    await withTransaction(server.pool, (client) =>
      applyToReadModels(client, testKeyring, records, { applied: 0, dropped: {} }),
    )
  }

  async function topicsOf(conversationId: string): Promise<string[]> {
    const { rows } = await server.pool.query<{ topics: string[] }>(
      'SELECT topics FROM rm_messages WHERE conversation_id = $1',
      [conversationId],
    )
    return rows[0]!.topics
  }

  it('keep topic ids exactly, inserted with their capture in one batch', async () => {
    const c = conversation()
    await apply([c.capture, c.result])
    expect(await topicsOf(c.id)).toEqual(TOPICS)
  })

  it('keep topic ids exactly, written onto a stored message by a later batch', async () => {
    const c = conversation()
    await apply([c.capture])
    await apply([c.result])
    expect(await topicsOf(c.id)).toEqual(TOPICS)
  })

  it('keep their results when the capture is sent again (the stored row read back, then written)', async () => {
    const c = conversation()
    await apply([c.capture])
    await apply([c.result])
    const again = record('conversation', c.id, 2, 'conversation.messages-captured', {
      messages: [{ id: 'm1', role: 'user', content: 'hello', sentAt: '2026-11-20T12:00:00.000Z' }],
      receivedAt: '2026-11-20T12:01:00.000Z',
      analysisRequested: false,
    })
    await apply([again])
    const { rows } = await server.pool.query<{ topics: string[]; sentiment_label: string; content: string }>(
      'SELECT topics, sentiment_label, content FROM rm_messages WHERE conversation_id = $1',
      [c.id],
    )
    expect(rows).toEqual([{ topics: TOPICS, sentiment_label: 'positive', content: 'hello' }])
  })

  it('are written by statements prepared once per connection (named), not parsed and planned each time', async () => {
    const client = await server.pool.connect()
    try {
      const c = conversation()
      const onThisConnection = async (records: JournalRecord[]) => {
        await client.query('BEGIN')
        await applyToReadModels(client, testKeyring, records, { applied: 0, dropped: {} })
        await client.query('COMMIT')
      }
      await onThisConnection([c.capture])
      await onThisConnection([c.result])
      const { rows } = await client.query<{ name: string }>('SELECT name FROM pg_prepared_statements')
      expect(rows.map((r) => r.name)).toEqual(
        expect.arrayContaining([
          'cas-messages-insert-new',
          returningOld ? 'cas-messages-upsert-results' : 'cas-messages-upsert-results-pre18',
          'cas-conversations-insert',
          'cas-conversations-lock',
          'cas-projector-erased-conversations',
        ]),
      )
      if (returningOld) {
        // The results' upsert returns the stored rows it replaced: no statement locks them first.
        expect(rows.map((r) => r.name)).not.toContain('cas-messages-lock')
      } else {
        // Before 18 (no RETURNING OLD) a statement locks and reads them first.
        expect(rows.map((r) => r.name)).toContain('cas-messages-lock')
      }
      expect(await topicsOf(c.id)).toEqual(TOPICS)
    } finally {
      client.release()
    }
  })
})
