/**
 * What the projector sends PostgreSQL for a batch, counted: the same fixed batches of message and analysis
 * events projected by the live projector's steps (applyToReadModels, one transaction a batch, as the
 * consumer runs it) into a real PostgreSQL, and for each batch the statements the projector sent (its
 * client's query calls) and what PostgreSQL did for them (pg_stat_statements, top level: shared blocks hit,
 * read and dirtied, WAL bytes; BEGIN and COMMIT included, planning not). Counts, not times: they hold on a
 * busy machine. Each round projects the same batches for chatbots of its own; the first round also pays
 * for first use (statements prepared, caches filled), so the last is the one to compare.
 *
 *   npm run bench:projector-statements -- [--conversations 40 --rounds 2 --by-statement]
 */
import { parseArgs } from 'node:util'
import { createPool } from '@cas/db'
import type { JournalRecord } from '@cas/eventlog'
import type { EventPayload, EventType } from '@cas/events'
import { dataKeyFor } from '@cas/keyring'
import type pg from 'pg'
import { applyToReadModels, type ProjectionStats } from '../services/projector/src/projections/apply.ts'
import { sealedRecord } from '../services/projector/test/sealed-record.ts'
import { testKeyring } from '../test/support/keyring.ts'
import { createBenchDatabase } from './support/in-process.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import { startBenchServers } from './support/servers.ts'

const { values } = parseArgs({
  options: {
    conversations: { type: 'string', default: '40' },
    rounds: { type: 'string', default: '2' },
    'by-statement': { type: 'boolean', default: false },
  },
})
const CONVERSATIONS = Number(values.conversations)
const ROUNDS = Number(values.rounds)
// Conversations erased in the erasure batch: each one is a barrier (its batch is flushed before it).
const ERASED = 4
const LANGUAGES = ['en', 'es', 'de']
const TOPICS = ['billing', 'refunds', 'shipping', 'login', 'returns']

interface Event {
  readonly streamType: 'conversation' | 'analysis' | 'chatbot'
  readonly streamId: string
  readonly type: EventType
  readonly payload: unknown
}

/** A fixed uuid: the same rows, so the same index pages, in every run. */
const uuid = (kind: number, round: number, i: number) =>
  `00000000-0000-4000-8${kind}${String(round).padStart(2, '0')}-${String(i).padStart(12, '0')}`

/**
 * The batches of one round, in journal order, for one organization's chatbot: its conversations captured
 * (four messages, two of the end user, over two hours), then their results (a language and a topic each),
 * then a re-analysis that moves a third of the end-user messages to another language and every message to
 * another topic (counts taken back), then new conversations captured and analysed in one batch (a live
 * batch), then erasures.
 */
function roundBatches(round: number): { name: string; events: Event[] }[] {
  const chatbotId = uuid(1, round, 0)
  const conversation = (i: number) => uuid(2, round, i)
  const hour = (i: number, m: number) =>
    `2026-11-20T${String(8 + (i % 3) + (m >= 2 ? 1 : 0)).padStart(2, '0')}:${String(10 + m).padStart(2, '0')}:00.000Z`
  const messageIds = ['u1', 'a1', 'u2', 'a2']
  const captured = (i: number): Event[] => [
    {
      streamType: 'conversation',
      streamId: conversation(i),
      type: 'conversation.started',
      payload: {
        conversationId: `c-${round}-${i}`,
        user: { id: `user-${i % 7}` },
        organization: {},
        session: {},
        custom: {},
      },
    },
    {
      streamType: 'conversation',
      streamId: conversation(i),
      type: 'conversation.messages-captured',
      payload: {
        messages: messageIds.map((id, m) => ({
          id,
          role: id.startsWith('u') ? 'user' : 'assistant',
          content: `message ${id} of conversation ${i}`,
          sentAt: hour(i, m),
        })),
        receivedAt: '2026-11-20T12:00:00.000Z',
        analysisRequested: true,
      },
    },
  ]
  const analysed = (i: number, again: boolean): Event[] => {
    const version = again ? '2' : '1'
    const topic = TOPICS[(i + (again ? 1 : 0)) % TOPICS.length]!
    const language = LANGUAGES[i % LANGUAGES.length]!
    const movedLanguage = again && i % 3 === 0 ? 'fr' : language
    return [
      {
        streamType: 'analysis',
        streamId: conversation(i),
        type: 'analysis.messages-analyzed',
        payload: {
          analyzer: { name: 'bench', version },
          results: messageIds.map((id, m) => ({
            messageId: id,
            sentiment: { score: m % 2 ? 0.5 : -0.25, label: m % 2 ? 'positive' : 'negative' },
            topics: [{ id: topic, label: topic }],
            language: id.startsWith('u') ? movedLanguage : 'en',
          })),
          signalsDecided: true,
        },
      },
      {
        streamType: 'analysis',
        streamId: conversation(i),
        type: 'analysis.conversation-analyzed',
        payload: {
          analyzer: { name: 'bench', version },
          sentiment: { score: 0.1, label: 'neutral' },
          assistantSentiment: null,
          topics: [{ id: topic, label: topic }],
        },
      },
    ]
  }
  const first = Array.from({ length: CONVERSATIONS }, (_, i) => i)
  const live = Array.from({ length: CONVERSATIONS }, (_, i) => CONVERSATIONS + i)
  return [
    {
      name: 'chatbot',
      events: [
        {
          streamType: 'chatbot',
          streamId: chatbotId,
          type: 'chatbot.created',
          payload: { name: `bench ${round}`, settings: {}, apiKeyPrefix: 'svc_live_abcd…' },
        },
      ],
    },
    { name: 'captures', events: first.flatMap(captured) },
    { name: 'results', events: first.flatMap((i) => analysed(i, false)) },
    { name: 're-analysis', events: first.flatMap((i) => analysed(i, true)) },
    { name: 'captures+results', events: live.flatMap((i) => [...captured(i), ...analysed(i, false)]) },
    {
      name: 'erasures',
      events: first.slice(0, ERASED).map((i) => ({
        streamType: 'conversation',
        streamId: conversation(i),
        type: 'conversation.erased',
        payload: { reason: 'end-user-erasure' },
      })),
    },
  ]
}

interface Counts {
  statements: number
  pgCalls: number
  hit: number
  read: number
  dirtied: number
  walBytes: number
}

const servers = await startBenchServers({
  name: 'projector-statements',
  postgres: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'top' },
})
try {
  const url = await createBenchDatabase(servers.postgres.url, 'bench')
  const pool = createPool(url, { max: 2 })
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  console.log(machineLine(await machineInfo({ databaseUrl: url })))
  console.log(
    `${CONVERSATIONS} conversations of 4 messages (2 of the end user) a round, ${ERASED} erased; ${ROUNDS} rounds`,
  )
  const orgId = uuid(0, 0, 0)
  const client = await pool.connect()
  let position = 1_000n
  const versions = new Map<string, number>()
  const keys = new Map<string, Buffer>()
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const chatbotId = uuid(1, round, 0)
      keys.set(chatbotId, await dataKeyFor(pool, testKeyring, chatbotId, orgId))
      console.log(`\nround ${round}`)
      console.log('batch              events  statements  pg calls  blocks hit  read  dirtied  WAL bytes')
      for (const batch of roundBatches(round)) {
        const records: JournalRecord[] = batch.events.map((e) => {
          const stream = `${e.streamType}/${e.streamId}`
          const streamVersion = (versions.get(stream) ?? 0) + 1
          versions.set(stream, streamVersion)
          position += 65_536n
          const place = {
            key: keys.get(chatbotId)!,
            orgId,
            chatbotId,
            streamType: e.streamType,
            streamId: e.streamId,
            streamVersion,
            position,
          }
          return sealedRecord(place, e.type, e.payload as EventPayload<typeof e.type>)
        })
        const { counts, byStatement } = await projectCounted(client, records)
        console.log(
          [
            batch.name.padEnd(18),
            String(records.length).padStart(6),
            String(counts.statements).padStart(11),
            String(counts.pgCalls).padStart(9),
            String(counts.hit).padStart(11),
            String(counts.read).padStart(5),
            String(counts.dirtied).padStart(8),
            String(counts.walBytes).padStart(10),
          ].join(' '),
        )
        if (values['by-statement'] && round === ROUNDS) {
          for (const s of byStatement)
            console.log(
              `    ${String(s.calls).padStart(3)} × hit ${String(s.hit).padStart(5)} read ${s.read} dirtied ${String(s.dirtied).padStart(3)}  ${s.query}`,
            )
        }
      }
    }
  } finally {
    client.release()
  }
  await pool.end()
} finally {
  await servers.stop()
}

/**
 * One batch in one transaction on `client`, as the consumer applies it, with the projector's query calls
 * counted, and pg_stat_statements' counts of the transaction (reset just before it).
 */
async function projectCounted(
  client: pg.PoolClient,
  records: readonly JournalRecord[],
): Promise<{
  counts: Counts
  byStatement: { query: string; calls: number; hit: number; read: number; dirtied: number }[]
}> {
  let statements = 0
  const counted = new Proxy(client, {
    get(target, property) {
      if (property === 'query')
        return (...args: Parameters<pg.PoolClient['query']>) => {
          statements++
          return (target.query as (...a: unknown[]) => unknown)(...args)
        }
      const value = Reflect.get(target, property)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  const stats: ProjectionStats = { applied: 0, dropped: {} }
  await client.query('SELECT pg_stat_statements_reset()')
  await client.query('BEGIN')
  try {
    await applyToReadModels(counted, testKeyring, records, stats)
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK')
    throw error
  }
  const { rows } = await client.query<{
    query: string
    calls: string
    hit: string
    read: string
    dirtied: string
    wal: string
  }>(
    `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS query, calls::text, shared_blks_hit::text AS hit,
            shared_blks_read::text AS read, shared_blks_dirtied::text AS dirtied, wal_bytes::text AS wal
       FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND query NOT LIKE '%pg_stat_statements%'
      ORDER BY shared_blks_hit + shared_blks_read DESC, query`,
  )
  const byStatement = rows.map((r) => ({
    query: r.query,
    calls: Number(r.calls),
    hit: Number(r.hit),
    read: Number(r.read),
    dirtied: Number(r.dirtied),
    wal: Number(r.wal),
  }))
  const sum = (f: (s: (typeof byStatement)[number]) => number) => byStatement.reduce((a, s) => a + f(s), 0)
  return {
    counts: {
      statements,
      pgCalls: sum((s) => s.calls),
      hit: sum((s) => s.hit),
      read: sum((s) => s.read),
      dirtied: sum((s) => s.dirtied),
      walBytes: sum((s) => s.wal),
    },
    byStatement,
  }
}
