import { BUILTIN_SIGNAL_NAMES, type RecordedEvent } from '@cas/events'
import { chatbotSignals } from '@cas/settings'
import type pg from 'pg'

/** The events that open or close a chatbot's signal periods: both carry the whole settings after them. */
export type SignalPeriodEvent = RecordedEvent<'chatbot.created'> | RecordedEvent<'chatbot.settings-changed'>

/** A chatbot's stored periods, as much of them as the fold needs. */
export interface StoredPeriods {
  /** The open period's on_version of each signal on. */
  readonly open: ReadonlyMap<string, number>
  /** The highest stream version the rows record (0: none): events up to it are already applied. */
  readonly version: number
}

/** A period opened by the batch (closed too when a later event of the batch turned the signal off). */
export interface OpenedPeriod {
  readonly orgId: string
  readonly chatbotId: string
  readonly signal: string
  readonly onSince: string
  readonly sinceCreation: boolean
  readonly onVersion: number
  offSince: string | null
  offVersion: number | null
}

/** A stored open period the batch closes. */
export interface ClosedPeriod {
  readonly chatbotId: string
  readonly signal: string
  readonly onVersion: number
  readonly offSince: string
  readonly offVersion: number
}

/** The signals on in a chatbot's settings: the built-in ones not turned off, and its own. */
export function signalsOnIn(settings: Readonly<Record<string, unknown>>): Set<string> {
  const { disabled, custom } = chatbotSignals(settings)
  return new Set([...BUILTIN_SIGNAL_NAMES.filter((s) => !disabled.includes(s)), ...custom.map((c) => c.name)])
}

/**
 * Folds one chatbot's events, in stream order, over its stored periods: a signal on after an event and not
 * before opens a period at the event's time, one on before and not after closes its period. Events at or
 * below the stored version are skipped (applied already: a redelivery, or a rebuild that got there first);
 * the state they would start from is the stored one, so applying a run twice gives the rows of once.
 */
export function foldSignalPeriods(
  events: readonly SignalPeriodEvent[],
  stored: StoredPeriods,
): { opened: OpenedPeriod[]; closed: ClosedPeriod[] } {
  const opened: OpenedPeriod[] = []
  const closed: ClosedPeriod[] = []
  const open = new Map<string, OpenedPeriod | number>(stored.open)
  for (const e of events) {
    if (e.streamVersion <= stored.version) continue
    const on = signalsOnIn(e.payload.settings)
    for (const [signal, period] of open) {
      if (on.has(signal)) continue
      if (typeof period === 'number') {
        closed.push({
          chatbotId: e.streamId,
          signal,
          onVersion: period,
          offSince: e.occurredAt,
          offVersion: e.streamVersion,
        })
      } else {
        period.offSince = e.occurredAt
        period.offVersion = e.streamVersion
      }
      open.delete(signal)
    }
    for (const signal of on) {
      if (open.has(signal)) continue
      const period: OpenedPeriod = {
        orgId: e.orgId,
        chatbotId: e.streamId,
        signal,
        onSince: e.occurredAt,
        sinceCreation: e.type === 'chatbot.created',
        onVersion: e.streamVersion,
        offSince: null,
        offVersion: null,
      }
      opened.push(period)
      open.set(signal, period)
    }
  }
  return { opened, closed }
}

/**
 * rm_signal_periods: the batch's chatbot.created and chatbot.settings-changed gathered per chatbot, folded
 * over the chatbots' stored periods (one read), written with one statement per kind.
 */
export class SignalPeriodChanges {
  private readonly pending = new Map<string, SignalPeriodEvent[]>()

  add(event: SignalPeriodEvent): void {
    const events = this.pending.get(event.streamId)
    if (events) events.push(event)
    else this.pending.set(event.streamId, [event])
  }

  async flush(client: pg.ClientBase): Promise<void> {
    if (this.pending.size === 0) return
    const ids = [...this.pending.keys()].sort()
    const batch = new Map(this.pending)
    this.pending.clear()
    const { rows } = await client.query<{
      chatbot_id: string
      signal: string
      on_version: number
      off_version: number | null
    }>(
      `SELECT chatbot_id, signal, on_version, off_version FROM rm_signal_periods WHERE chatbot_id = ANY($1::uuid[])`,
      [ids],
    )
    const opened: OpenedPeriod[] = []
    const closed: ClosedPeriod[] = []
    for (const id of ids) {
      const open = new Map<string, number>()
      let version = 0
      for (const r of rows) {
        if (r.chatbot_id !== id) continue
        if (r.off_version === null) open.set(r.signal, r.on_version)
        version = Math.max(version, r.on_version, r.off_version ?? 0)
      }
      const change = foldSignalPeriods(batch.get(id)!, { open, version })
      opened.push(...change.opened)
      closed.push(...change.closed)
    }
    if (closed.length > 0) {
      await client.query(
        `UPDATE rm_signal_periods AS p SET off_since = d.off_since, off_version = d.off_version
           FROM unnest($1::uuid[], $2::text[], $3::int[], $4::timestamptz[], $5::int[])
                AS d(chatbot_id, signal, on_version, off_since, off_version)
          WHERE p.chatbot_id = d.chatbot_id AND p.signal = d.signal AND p.on_version = d.on_version
            AND p.off_version IS NULL`,
        [
          closed.map((c) => c.chatbotId),
          closed.map((c) => c.signal),
          closed.map((c) => c.onVersion),
          closed.map((c) => c.offSince),
          closed.map((c) => c.offVersion),
        ],
      )
    }
    if (opened.length > 0) {
      await client.query(
        `INSERT INTO rm_signal_periods (org_id, chatbot_id, signal, on_since, since_creation, on_version,
                                        off_since, off_version)
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::boolean[], $6::int[],
                              $7::timestamptz[], $8::int[])
         ON CONFLICT (chatbot_id, signal, on_version) DO NOTHING`,
        [
          opened.map((p) => p.orgId),
          opened.map((p) => p.chatbotId),
          opened.map((p) => p.signal),
          opened.map((p) => p.onSince),
          opened.map((p) => p.sinceCreation),
          opened.map((p) => p.onVersion),
          opened.map((p) => p.offSince),
          opened.map((p) => p.offVersion),
        ],
      )
    }
  }
}
