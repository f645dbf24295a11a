/**
 * rm_signals_decided (issue 32): when each conversation's signals were last decided, the latest
 * `occurredAt` of its analysis.messages-analyzed that decided them (the analysis decides them again in its
 * transaction) and analysis.signals-detected (the sweep and the LLM refiner announce a change alone). The
 * same rows however the events are cut into batches and when they are all delivered again. A re-placement
 * in a topic (`signalsDecided: false`) decided nothing; events recorded as v2, which did not say, read as
 * they always did, as migration 0048 made them from the journal.
 */
import { randomUUID } from 'node:crypto'
import type { JournalRecord } from '@cas/eventlog'
import { describe, it } from 'vitest'
import {
  backfilled,
  expectSameRows,
  journal,
  onDay,
  projectionTests,
  type Row,
  thenRowsInAnyBatches,
} from '../../test/given.ts'

const { given, pool } = projectionTests()
const orgId = randomUUID()
const bot = randomUUID()
const [analysedOnly, sweptLater, signalsOnly] = [randomUUID(), randomUUID(), randomUUID()]
const analyzer = { name: 'test', version: '1' }

/**
 * One conversation analysed twice with no signal (no signals-detected: none changed), then re-placed in a
 * new topic; one analysed, its signals announced, then changed by the sweep days later; one whose only
 * decision is a signals-detected, re-placed later.
 */
function events() {
  const j = journal(orgId)
  const results = (conversation: string, day: number, signalsDecided: boolean, topic: string) =>
    j.append(
      bot,
      'analysis',
      conversation,
      'analysis.messages-analyzed',
      {
        analyzer,
        results: [
          {
            messageId: 'm1',
            sentiment: { score: 0, label: 'neutral' },
            topics: [{ id: topic, label: topic }],
          },
        ],
        signalsDecided,
      },
      onDay(day),
    )
  const analysed = (conversation: string, day: number) => results(conversation, day, true, 'other')
  const replaced = (conversation: string, day: number) => results(conversation, day, false, 'refunds')
  const detected = (conversation: string, day: number, signals: string[]) =>
    j.append(
      bot,
      'analysis',
      conversation,
      'analysis.signals-detected',
      {
        analyzer,
        settled: true,
        signals: signals.map((name) => ({ name, confidence: 0.8, evidence: ['m1'] })),
      },
      onDay(day),
    )
  analysed(analysedOnly, 2)
  analysed(sweptLater, 3)
  detected(sweptLater, 3, ['bot_failure'])
  analysed(analysedOnly, 4)
  detected(signalsOnly, 5, [])
  detected(sweptLater, 6, ['bot_failure', 'abandonment'])
  replaced(analysedOnly, 7)
  replaced(signalsOnly, 8)
  return j
}

/** The same events as the journal held them before v3: analysis.messages-analyzed v2, which did not say. */
const asV2 = (records: JournalRecord[]): JournalRecord[] =>
  records.map((r) => {
    if (r.type !== 'analysis.messages-analyzed') return r
    const { signalsDecided: _, ...payload } = r.payload as Record<string, unknown>
    return { ...r, version: 2, payload }
  })

const decided = (r: Row) => [r.conversation_id, new Date(r.decided_at as string).toISOString()]
const EXPECTED = [
  [analysedOnly, onDay(4)],
  [sweptLater, onDay(6)],
  [signalsOnly, onDay(5)],
]
/** v2 did not tell a re-placement apart: it counted as deciding. */
const EXPECTED_V2 = [
  [analysedOnly, onDay(7)],
  [sweptLater, onDay(6)],
  [signalsOnly, onDay(8)],
]

describe('when the signals were decided', () => {
  // Regression (issue 32): a re-placement in a topic sends analysis.messages-analyzed without deciding the
  // conversation's signals, and re-stamped the time: a conversation analysed while a signal was off, re-placed
  // after it was back on, counted as checked for it.
  it('keeps the latest analysis or announcement of each conversation, not its re-placements', async () => {
    await given(events()).projected().thenRows('rm_signals_decided', decided, EXPECTED)
  })

  it('gives the same rows however the events are cut into batches, and when they come again', async () => {
    await thenRowsInAnyBatches(given(events()), 'rm_signals_decided', decided, EXPECTED)
  })

  it('reads v2 events as before, as migration 0048 made them from the journal', async () => {
    await given(events()).projected({ recorded: asV2 }).thenRows('rm_signals_decided', decided, EXPECTED_V2)
    const records = asV2(await given(events()).records())
    const rows = await backfilled(pool(), {
      migration: '0048_signals-decided.sql',
      from: 'INSERT INTO rm_signals_decided',
      tables: ['rm_conversations', 'rm_signals_decided'],
      records,
      table: 'rm_signals_decided',
      seed: (client) =>
        // The conversations' rows (an erased conversation, or a deleted chatbot's, has none: left out).
        client.query(
          `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, created_at, updated_at, preview)
         SELECT id, $1, $2, 'c-' || id, $3, $3, '' FROM unnest($4::uuid[]) AS id`,
          [orgId, bot, onDay(1), [analysedOnly, sweptLater, signalsOnly]],
        ),
    })
    expectSameRows(rows.map(decided), EXPECTED_V2)
  })
})
