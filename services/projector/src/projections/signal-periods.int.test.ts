/**
 * rm_signal_periods (issue 32): when each of a chatbot's signals was on, from the settings its
 * chatbot.created and chatbot.settings-changed carry. The same rows however the events are cut into
 * batches, when they are all delivered again, and as migration 0047 makes them from the journal.
 */
import { randomUUID } from 'node:crypto'
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
const other = randomUUID()
const DISCOUNT = { label: 'Asks for a Discount!', examples: ['any coupon?'] }
const REFUND = { label: 'Wants a refund', examples: ['money back'] }
type SignalSettings = {
  disabled?: string[]
  custom?: { label: string; examples: string[] }[]
}

/**
 * The chatbot: created with escalation off and its own discount signal; then the custom list changed
 * (discount kept, refund added); frustration turned off, then on again; the refund removed; a change
 * that touches no signal. The other chatbot: created with the defaults.
 */
function events() {
  const j = journal(orgId)
  const settings = (signals: SignalSettings) => ({ signals, language: 'en' })
  j.append(
    bot,
    'chatbot',
    bot,
    'chatbot.created',
    {
      name: 'bot',
      settings: settings({ disabled: ['escalation'], custom: [DISCOUNT] }),
      apiKeyPrefix: 'svc_live_abcd…',
    },
    onDay(1),
  )
  j.append(
    other,
    'chatbot',
    other,
    'chatbot.created',
    { name: 'other', settings: {}, apiKeyPrefix: 'svc_live_abcd…' },
    onDay(1),
  )
  const changed = (day: number, signals: SignalSettings) =>
    j.append(
      bot,
      'chatbot',
      bot,
      'chatbot.settings-changed',
      { patch: { signals }, settings: settings({ disabled: ['escalation'], ...signals }) },
      onDay(day),
    )
  changed(3, { custom: [DISCOUNT, REFUND] })
  changed(5, { custom: [DISCOUNT, REFUND], disabled: ['escalation', 'frustration'] })
  changed(7, { custom: [DISCOUNT, REFUND] })
  changed(9, { custom: [DISCOUNT] })
  j.append(bot, 'chatbot', bot, 'chatbot.renamed', { name: 'renamed' }, onDay(10))
  changed(11, { custom: [DISCOUNT] })
  return j
}

const period = (r: Row) => [
  r.chatbot_id === bot ? 'bot' : 'other',
  r.signal,
  r.since_creation,
  r.on_version,
  r.off_version,
  new Date(r.on_since as string).toISOString(),
  r.off_since === null ? null : new Date(r.off_since as string).toISOString(),
]

const EXPECTED = [
  ['bot', 'abandonment', true, 1, null, onDay(1), null],
  ['bot', 'bot_failure', true, 1, null, onDay(1), null],
  ['bot', 'repetition', true, 1, null, onDay(1), null],
  ['bot', 'resolution', true, 1, null, onDay(1), null],
  ['bot', 'frustration', true, 1, 3, onDay(1), onDay(5)],
  ['bot', 'frustration', false, 4, null, onDay(7), null],
  ['bot', 'custom:asks-for-a-discount', true, 1, null, onDay(1), null],
  ['bot', 'custom:wants-a-refund', false, 2, 5, onDay(3), onDay(9)],
  ...['escalation', 'bot_failure', 'repetition', 'frustration', 'resolution', 'abandonment'].map((s) => [
    'other',
    s,
    true,
    1,
    null,
    onDay(1),
    null,
  ]),
]

describe('the signal periods projection', () => {
  it('opens a period where a signal turns on and closes it where it turns off', async () => {
    await given(events()).projected().thenRows('rm_signal_periods', period, EXPECTED)
  })

  it('gives the same rows however the events are cut into batches, and when they come again', async () => {
    await thenRowsInAnyBatches(given(events()), 'rm_signal_periods', period, EXPECTED)
  })

  it('is what migration 0047 makes of the journal for chatbots projected before it', async () => {
    const j = events()
    await given(j).projected().thenRows('rm_signal_periods', period, EXPECTED)
    const records = await given(j).records()
    const rows = await backfilled(pool(), {
      migration: '0047_signal-periods.sql',
      from: 'WITH ev AS',
      tables: ['rm_chatbots', 'rm_signal_periods'],
      records,
      table: 'rm_signal_periods',
      seed: (client) =>
        client.query(
          `INSERT INTO rm_chatbots (id, org_id, name, api_key_prefix, settings, created_at, stream_version)
         VALUES ($1, $3, 'bot', 'k', '{}', $4, 7), ($2, $3, 'other', 'k', '{}', $4, 1)`,
          [bot, other, orgId, onDay(1)],
        ),
    })
    expectSameRows(rows.map(period), EXPECTED)
  })
})
