import { parseArgs } from 'node:util'
import {
  acknowledgeJournalConflicts,
  assertNever,
  type JournalConflict,
  type JournalConflictSelection,
  listJournalConflicts,
} from '@cas/eventlog'
import { isUuid } from '@cas/views'
import type pg from 'pg'
import type { CommandOutput } from './dead-letters-command.ts'

export const JOURNAL_CONFLICTS_USAGE = `usage: npm run journal-conflicts -- <command>
  list [--format table|json|csv]         the events Kafka holds that the journal lost (a restored backup), once each
  acknowledge (<event-id>... | --all)    mark them seen: /readyz stops counting them (the metric keeps its count)`

const FORMATS = ['table', 'json', 'csv'] as const
type Format = (typeof FORMATS)[number]

/**
 * `npm run journal-conflicts`: what an operator does with the events the Kafka consumers left out because
 * the journal does not hold them (journal_conflicts; docs/operations.md, Backups): list them, to hand on
 * (their ids: the captures acknowledged after the backup that are gone), and acknowledge them. Never a
 * payload: it may hold personal data. Returns the exit code (64: usage, 1: an id no group left out).
 */
export async function runJournalConflictsCommand(
  pool: pg.Pool,
  argv: readonly string[],
  io: CommandOutput,
): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (err) {
    return usage(io, (err as Error).message)
  }
  const { command, ids, values } = parsed
  switch (command) {
    case 'list': {
      if (ids.length > 0) return usage(io, 'list takes no ids')
      if (values.all !== undefined) return usage(io, 'list takes no --all (that is acknowledge --all)')
      const format = values.format ?? 'table'
      if (!isFormat(format)) return usage(io, `unknown format ${format} (table, json or csv)`)
      const conflicts = await listJournalConflicts(pool)
      for (const line of render(conflicts, format)) io.out(line)
      return 0
    }
    case 'acknowledge': {
      if (values.format !== undefined)
        return usage(io, 'acknowledge takes no --format (that is list --format)')
      const selection = selectionOf(ids, values.all === true)
      if (!selection) return usage(io, 'acknowledge takes event ids, or --all')
      const outcome = await acknowledgeJournalConflicts(pool, selection)
      if (!outcome.ok) {
        io.err(
          `No consumer group left out ${outcome.unknown.length === 1 ? 'event' : 'events'} ${outcome.unknown.join(', ')}: nothing acknowledged.`,
        )
        return 1
      }
      const events = outcome.acknowledged === 1 ? 'event' : 'events'
      io.out(`Acknowledged ${outcome.acknowledged} ${events} left out as not in the journal.`)
      return 0
    }
    default:
      return usage(io, command ? `unknown command ${command}` : 'no command')
  }
}

function parse(argv: readonly string[]) {
  const { positionals, values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { format: { type: 'string' }, all: { type: 'boolean' } },
  })
  const [command, ...ids] = positionals
  for (const id of ids) if (!isUuid(id)) throw new Error(`not an event id: ${id}`)
  return { command, ids: ids.map((id) => id.toLowerCase()), values }
}

const isFormat = (format: string): format is Format => (FORMATS as readonly string[]).includes(format)

function usage(io: CommandOutput, problem: string): number {
  io.err(problem)
  io.err(JOURNAL_CONFLICTS_USAGE)
  return 64
}

function selectionOf(ids: readonly string[], all: boolean): JournalConflictSelection | undefined {
  if (all && ids.length === 0) return { all: true }
  if (!all && ids.length > 0) return { eventIds: ids }
  return undefined
}

const COLUMNS: readonly [string, (c: JournalConflict) => string][] = [
  ['eventId', (c) => c.eventId],
  ['type', (c) => c.eventType ?? ''],
  ['streamType', (c) => c.streamType],
  ['streamId', (c) => c.streamId],
  ['chatbotId', (c) => c.chatbotId ?? ''],
  ['streamVersion', (c) => String(c.streamVersion)],
  ['topic', (c) => c.topic],
  ['partition', (c) => String(c.partition)],
  ['offset', (c) => c.offset],
  ['groups', (c) => c.groups.join(' ')],
  ['leftOutAt', (c) => c.leftOutAt],
  ['acknowledgedAt', (c) => c.acknowledgedAt ?? ''],
]

function render(conflicts: readonly JournalConflict[], format: Format): string[] {
  switch (format) {
    case 'json':
      return [JSON.stringify(conflicts, null, 2)]
    case 'csv':
      return [COLUMNS.map(([name]) => name), ...conflicts.map((c) => COLUMNS.map(([, cell]) => cell(c)))].map(
        (row) => row.map(csvCell).join(','),
      )
    case 'table': {
      if (conflicts.length === 0) return ['No events left out as not in the journal.']
      const rows = conflicts.map((c) => COLUMNS.map(([, cell]) => cell(c)))
      const header = COLUMNS.map(([name]) => name)
      const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
      return [header, ...rows].map((r) =>
        r
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      )
    }
    default:
      return assertNever(format, 'format')
  }
}

/** RFC 4180: a cell holding a comma, a quote or a line break is quoted, its quotes doubled. */
function csvCell(cell: string): string {
  return /[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell
}
