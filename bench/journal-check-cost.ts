/**
 * What the Kafka consumers' check that an event is in the journal costs (ApplyBatchOptions.verifyInJournal,
 * helper restore1): the statement that reads a batch's seen stream versions, without and with the check,
 * over a seeded journal, in shared blocks (hit + read) per event and execution time, both from EXPLAIN
 * (ANALYZE, BUFFERS). Blocks are counts, whatever the load; times follow it (compare them within a run).
 *
 *   npx tsx bench/journal-check-cost.ts [--streams 50000 --batches 20 --batch 500]
 */
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import { createPool } from '@cas/db'
import {
  SEEN_STREAM_VERSIONS,
  SEEN_STREAM_VERSIONS_AND_NOT_IN_JOURNAL,
} from '../libs/eventlog/src/apply-batch.ts'
import { createBenchDatabase } from './support/in-process.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import { startBenchServers } from './support/servers.ts'

const { values } = parseArgs({
  options: {
    streams: { type: 'string', default: '50000' },
    batches: { type: 'string', default: '20' },
    batch: { type: 'string', default: '500' },
  },
})
const STREAMS = Number(values.streams)
const BATCHES = Number(values.batches)
const BATCH = Number(values.batch)
// Events per stream in the journal: a conversation's started and messages captured, then two captures more.
const VERSIONS = 4

interface Plan {
  'Shared Hit Blocks': number
  'Shared Read Blocks': number
}

const servers = await startBenchServers({ name: 'journal-check' })
try {
  const url = await createBenchDatabase(servers.postgres.url, 'bench')
  const pool = createPool(url, { max: 2 })
  console.log(machineLine(await machineInfo()))
  // A journal of STREAMS conversations × VERSIONS events (payloads of ~1 KB, as a capture's), each
  // stream's row, and a group that has applied the first two versions of every stream.
  await pool.query(
    `INSERT INTO event_streams (stream_type, stream_id, version, last_tx, org_id, chatbot_id)
     SELECT 'conversation', gen_random_uuid(), $2, '1'::xid8, gen_random_uuid(), gen_random_uuid()
       FROM generate_series(1, $1)`,
    [STREAMS, VERSIONS],
  )
  await pool.query(
    `INSERT INTO event_journal (position, event_id, stream_type, stream_id, stream_version, type, version,
                                occurred_at, org_id, chatbot_id, payload)
     SELECT row_number() OVER (ORDER BY v, s.stream_id), gen_random_uuid(), s.stream_type, s.stream_id, v,
            'conversation.messages-captured', 1, now(), s.org_id, s.chatbot_id,
            jsonb_build_object('sealed', repeat('x', 1000))
       FROM event_streams s, generate_series(1, $1) v`,
    [VERSIONS],
  )
  const group = `bench-${randomUUID()}`
  await pool.query(
    `INSERT INTO consumer_stream_versions (group_id, stream_type, stream_id, version)
     SELECT $1, stream_type, stream_id, 2 FROM event_streams`,
    [group],
  )
  await pool.query('VACUUM ANALYZE event_journal')
  await pool.query('VACUUM ANALYZE event_streams')
  await pool.query('VACUUM ANALYZE consumer_stream_versions')

  const totals = { plain: { blocks: 0, ms: 0 }, checked: { blocks: 0, ms: 0 } }
  for (let b = 0; b < BATCHES; b++) {
    // A batch as Kafka delivers it: the next two versions of BATCH / 2 streams.
    const { rows: events } = await pool.query<{
      stream_type: string
      stream_id: string
      stream_version: number
      event_id: string
    }>(
      `SELECT stream_type, stream_id::text, stream_version, event_id::text FROM event_journal
        WHERE stream_id IN (SELECT stream_id FROM event_streams ORDER BY random() LIMIT $1)
          AND stream_version > 2 ORDER BY stream_id, stream_version`,
      [BATCH / 2],
    )
    const streams = [...new Set(events.map((e) => e.stream_id))]
    const seen = [group, streams.map(() => 'conversation'), streams]
    const checked = [
      ...seen,
      events.map((e) => e.stream_type),
      events.map((e) => e.stream_id),
      events.map((e) => e.stream_version),
      events.map((e) => e.event_id),
    ]
    // Alternated, the checked one first in every other batch, so that neither warms the cache for the other.
    const order = b % 2 ? (['plain', 'checked'] as const) : (['checked', 'plain'] as const)
    for (const which of order) {
      const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: Plan; 'Execution Time': number }] }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${which === 'plain' ? SEEN_STREAM_VERSIONS : SEEN_STREAM_VERSIONS_AND_NOT_IN_JOURNAL}`,
        which === 'plain' ? seen : checked,
      )
      const plan = rows[0]!['QUERY PLAN'][0]
      totals[which].blocks += plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks']
      totals[which].ms += plan['Execution Time']
    }
  }
  const events = BATCHES * BATCH
  for (const which of ['plain', 'checked'] as const) {
    console.log(
      `${which.padEnd(8)} ${(totals[which].blocks / events).toFixed(2)} shared blocks per event, ` +
        `${((totals[which].ms * 1000) / events).toFixed(1)} µs per event (${BATCHES} batches of ${BATCH}, ` +
        `journal ${STREAMS * VERSIONS} events)`,
    )
  }
  await pool.end()
} finally {
  await servers.stop()
}
