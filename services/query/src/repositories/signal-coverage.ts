import type pg from 'pg'

/**
 * A signal on for a chatbot now, and the times at which a conversation's signals were decided (its
 * rm_signals_decided row) that make it checked for it (besides those that carry it): a tstzmultirange
 * literal, '{(,)}' when all of them were. A conversation never decided is checked for none.
 */
export interface SignalOn {
  chatbotId: string
  signal: string
  checked: string
}

/** A period of rm_signal_periods: from `on` (null: the chatbot's creation) to `off` (null: still on). */
export interface SignalPeriod {
  on: Date | null
  off: Date | null
}

/**
 * "The signal is on for the chatbot now", stated once (SQL over the two expressions given): it has a
 * period with no end in rm_signal_periods, the projector's periods made from the chatbot's events (only
 * its last period of a signal can be open). A chatbot without periods (none of its signals was ever on)
 * has none on. signalsOn reads the signals report's signals by it, and the conversation list its
 * `signal=` filter, in the list's one statement (a lookup by rm_signal_periods' primary key).
 */
export function signalOnNow(chatbotId: string, signal: string): string {
  return `EXISTS (SELECT FROM rm_signal_periods now_on WHERE now_on.chatbot_id = ${chatbotId}
            AND now_on.signal = ${signal} AND now_on.off_since IS NULL)`
}

/**
 * The signals on for each chatbot of the scope with a read-model row (`configured`; signalOnNow), and
 * when their conversations were checked for them (issue 32: a signal turned off is counted nowhere for
 * that chatbot; one added or turned on again later is rated over the conversations checked for it). The
 * last finished re-analysis is rm_reanalysis's.
 */
export async function signalsOn(
  client: pg.ClientBase,
  orgId: string,
  chatbotId: string | undefined,
): Promise<{ configured: string[]; on: SignalOn[] }> {
  const { rows: bots } = await client.query<{ id: string }>(
    'SELECT id FROM rm_chatbots WHERE org_id = $1 AND ($2::uuid IS NULL OR id = $2)',
    [orgId, chatbotId ?? null],
  )
  if (bots.length === 0) return { configured: [], on: [] }
  const ids = bots.map((b) => b.id)
  const { rows: periods } = await client.query<{
    chatbot_id: string
    signal: string
    on_since: Date
    since_creation: boolean
    off_since: Date | null
  }>(
    `SELECT chatbot_id, signal, on_since, since_creation, off_since FROM rm_signal_periods p
      WHERE org_id = $1 AND chatbot_id = ANY($2::uuid[]) AND ${signalOnNow('p.chatbot_id', 'p.signal')}
      ORDER BY chatbot_id, signal, on_version`,
    [orgId, ids],
  )
  const { rows: reanalyses } = await client.query<{ chatbot_id: string; started_at: Date }>(
    `SELECT chatbot_id, started_at FROM rm_reanalysis
      WHERE org_id = $1 AND chatbot_id = ANY($2::uuid[]) AND status = 'finished'`,
    [orgId, ids],
  )
  const reanalysed = new Map(reanalyses.map((r) => [r.chatbot_id, r.started_at]))
  const bySignal = new Map<string, { chatbotId: string; signal: string; periods: SignalPeriod[] }>()
  for (const p of periods) {
    const key = `${p.chatbot_id} ${p.signal}`
    let entry = bySignal.get(key)
    if (!entry) {
      entry = { chatbotId: p.chatbot_id, signal: p.signal, periods: [] }
      bySignal.set(key, entry)
    }
    entry.periods.push({ on: p.since_creation ? null : p.on_since, off: p.off_since })
  }
  const on = [...bySignal.values()].map(({ chatbotId, signal, periods: ps }) => ({
    chatbotId,
    signal,
    checked: checkedTimes(ps, reanalysed.get(chatbotId) ?? null),
  }))
  return { configured: ids, on }
}

/**
 * The times at which a conversation's signals were last decided that make it checked for a signal with
 * these periods: its signals are decided again whenever one of its messages is analysed, with the
 * settings of then, so a conversation whose signals were decided in a period was checked (whatever the
 * time its last message carries: one captured or imported after the signal was turned off is analysed
 * without it), and all those decided before the start of a finished re-analysis that ran while the
 * signal was on. A tstzmultirange literal (Postgres merges what overlaps).
 */
export function checkedTimes(periods: readonly SignalPeriod[], reanalysedAt: Date | null): string {
  const bound = (d: Date | null) => (d === null ? '' : `"${d.toISOString()}"`)
  const ranges = periods.map((p) => `[${bound(p.on)},${bound(p.off)})`)
  const during = (at: Date) =>
    periods.some((p) => (p.on === null || p.on <= at) && (p.off === null || at < p.off))
  if (reanalysedAt !== null && during(reanalysedAt)) ranges.push(`(,${bound(reanalysedAt)})`)
  return `{${ranges.map((r) => (r.startsWith('[,') ? `(${r.slice(1)}` : r)).join(',')}}`
}
