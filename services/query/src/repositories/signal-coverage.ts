import { BUILTIN_SIGNAL_NAMES } from '@cas/events'
import { chatbotSignals, customSignalName } from '@cas/settings'
import type pg from 'pg'

/**
 * A signal on for a chatbot now, and since when its conversations were checked for it: null when all of
 * them were (on since the chatbot's creation, or a re-analysis started after it was turned on has finished).
 */
export interface SignalOn {
  chatbotId: string
  signal: string
  since: Date | null
}

/** A chatbot.settings-changed of the audit log: when, and the merge patch it applied. */
export interface SettingsChange {
  at: Date
  patch: unknown
}

/**
 * The signals on for each chatbot of the scope with a read-model row (`configured`), and since when (issue
 * 32: a signal turned off is counted nowhere for that chatbot; one added or turned on again later is rated
 * over the conversations checked for it). The settings' history is the audit log's chatbot.settings-changed
 * patches (audit_entries, the log's published view); the last finished re-analysis is rm_reanalysis's.
 */
export async function signalsOn(
  client: pg.ClientBase,
  orgId: string,
  chatbotId: string | undefined,
): Promise<{ configured: string[]; on: SignalOn[] }> {
  const { rows: bots } = await client.query<{ id: string; settings: Record<string, unknown> }>(
    `SELECT id, settings FROM rm_chatbots WHERE org_id = $1 AND ($2::uuid IS NULL OR id = $2)`,
    [orgId, chatbotId ?? null],
  )
  if (bots.length === 0) return { configured: [], on: [] }
  const ids = bots.map((b) => b.id)
  const { rows: changes } = await client.query<{
    target_id: string
    occurred_at: Date
    details: { patch?: unknown }
  }>(
    `SELECT target_id, occurred_at, details FROM audit_entries
      WHERE org_id = $1 AND target_type = 'chatbot' AND action = 'chatbot.settings-changed'
        AND target_id = ANY($2::text[])
      ORDER BY position`,
    [orgId, ids],
  )
  const { rows: reanalyses } = await client.query<{ chatbot_id: string; started_at: Date }>(
    `SELECT chatbot_id, started_at FROM rm_reanalysis
      WHERE org_id = $1 AND chatbot_id = ANY($2::uuid[]) AND status = 'finished'`,
    [orgId, ids],
  )
  const reanalysed = new Map(reanalyses.map((r) => [r.chatbot_id, r.started_at]))
  const on: SignalOn[] = []
  for (const bot of bots) {
    const history = changes
      .filter((c) => c.target_id === bot.id)
      .map((c) => ({ at: c.occurred_at, patch: c.details.patch }))
    for (const [signal, since] of signalsSince(bot.settings, history)) {
      const reanalysedAt = reanalysed.get(bot.id)
      const all = since === null || (reanalysedAt !== undefined && reanalysedAt >= since)
      on.push({ chatbotId: bot.id, signal, since: all ? null : since })
    }
  }
  return { configured: ids, on }
}

/**
 * Each signal on in `settings`, with the time of the settings change from which it has been on (null: as
 * long as the history tells, since the chatbot's creation). The patches are RFC 7396 merge patches, whose
 * arrays replace: a patch that sets `signals.disabled` (or `signals.custom`) tells the whole list after it.
 * What the chatbot was created with is not in the audit log: a built-in signal on in the first patch that
 * sets the disabled list is taken as on since creation (the default), a custom one in the first patch that
 * sets the custom list as added by it (its rate then counts fewer conversations as checked, never ones that
 * were not).
 */
export function signalsSince(
  settings: Record<string, unknown>,
  history: readonly SettingsChange[],
): Map<string, Date | null> {
  const current = chatbotSignals(settings)
  const out = new Map<string, Date | null>()
  const lists = history.map((c) => listsAfter(c.patch))
  const since = (isOn: (l: Lists) => boolean | undefined, unknownStart: 'creation' | 'first') => {
    let from: Date | null = null
    let reachedStart = true
    for (let i = history.length - 1; i >= 0; i--) {
      const state = isOn(lists[i]!)
      if (state === undefined) continue
      if (!state) {
        reachedStart = false
        break
      }
      from = history[i]!.at
    }
    return reachedStart && unknownStart === 'creation' ? null : from
  }
  for (const name of BUILTIN_SIGNAL_NAMES) {
    if (current.disabled.includes(name)) continue
    out.set(
      name,
      since((l) => (l.disabled === undefined ? undefined : !l.disabled.includes(name)), 'creation'),
    )
  }
  for (const { name } of current.custom) {
    out.set(
      name,
      since((l) => (l.custom === undefined ? undefined : l.custom.includes(name)), 'first'),
    )
  }
  return out
}

interface Lists {
  disabled?: string[]
  custom?: string[]
}

/** The lists a patch sets: undefined where it leaves them as they were. */
function listsAfter(patch: unknown): Lists {
  if (!isObject(patch) || !('signals' in patch)) return {}
  const signals = patch.signals
  if (!isObject(signals)) return { disabled: [], custom: [] }
  const lists: Lists = {}
  if ('disabled' in signals) {
    lists.disabled = Array.isArray(signals.disabled)
      ? signals.disabled.filter((s) => typeof s === 'string')
      : []
  }
  if ('custom' in signals) {
    lists.custom = Array.isArray(signals.custom)
      ? signals.custom.flatMap((c) =>
          isObject(c) && typeof c.label === 'string' ? [customSignalName(c.label)] : [],
        )
      : []
  }
  return lists
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
