import { parseArgs } from 'node:util'
import {
  type DeadLetter,
  type DeadLetterSelection,
  discardDeadLetters,
  listDeadLetters,
  requestRedrive,
  showDeadLetter,
} from '@cas/eventlog'
import type pg from 'pg'

export const DEAD_LETTERS_USAGE = `usage: npm run dead-letters -- <command>
  list [--group <group>] [--json]            the events consumers set aside, oldest first
  show <id>                                   one of them, with the event as it arrived (JSON)
  redrive (<id>... | --all [--group <group>]) apply them again after a fix, and wait (--no-wait: only ask)
  discard (<id>... | --all [--group <group>]) delete them for good (the events stay unapplied)`

export interface CommandOutput {
  out(line: string): void
  err(line: string): void
}

export interface RedriveWait {
  /** How long `redrive` waits for the running consumers (default 60 s). */
  readonly timeoutMs?: number
  readonly pollMs?: number
}

/**
 * `npm run dead-letters`: what an operator does with the events the consumers set aside (DESIGN.md
 * guarantee 9). A re-drive is applied by a running member of the event's consumer group (the service
 * must be running), which this command asks for and waits on. Returns the exit code (64: usage).
 */
export async function runDeadLetterCommand(
  pool: pg.Pool,
  argv: readonly string[],
  io: CommandOutput,
  wait: RedriveWait = {},
): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (err) {
    io.err((err as Error).message)
    io.err(DEAD_LETTERS_USAGE)
    return 64
  }
  const { command, ids, values } = parsed
  switch (command) {
    case 'list': {
      const letters = await listDeadLetters(pool, values.group === undefined ? {} : { groupId: values.group })
      if (values.json) io.out(JSON.stringify(letters, null, 2))
      else if (letters.length === 0) io.out('No dead letters.')
      else for (const line of table(letters)) io.out(line)
      return 0
    }
    case 'show': {
      if (ids.length !== 1) return usage(io, 'show takes one id')
      const letter = await showDeadLetter(pool, ids[0]!)
      if (!letter) {
        io.err(`No dead letter ${ids[0]}.`)
        return 1
      }
      io.out(JSON.stringify(letter, null, 2))
      return 0
    }
    case 'redrive':
    case 'discard': {
      const selection = selectionOf(ids, values)
      if (!selection) return usage(io, `${command} takes ids, or --all`)
      if (command === 'discard') {
        io.out(`Discarded ${await discardDeadLetters(pool, selection)} dead letters.`)
        return 0
      }
      const asked = await listSelected(pool, selection)
      const n = await requestRedrive(pool, selection)
      io.out(`Asked the running consumers to re-drive ${n} dead letters.`)
      if (n === 0 || values['no-wait']) return 0
      return waitForRedrive(pool, asked, io, wait)
    }
    default:
      return usage(io, command ? `unknown command ${command}` : 'no command')
  }
}

function parse(argv: readonly string[]) {
  const { positionals, values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      group: { type: 'string' },
      json: { type: 'boolean' },
      all: { type: 'boolean' },
      'no-wait': { type: 'boolean' },
    },
  })
  const [command, ...ids] = positionals
  for (const id of ids) if (!/^\d{1,18}$/.test(id)) throw new Error(`not a dead-letter id: ${id}`)
  return { command, ids, values }
}

function usage(io: CommandOutput, problem: string): number {
  io.err(problem)
  io.err(DEAD_LETTERS_USAGE)
  return 64
}

function selectionOf(
  ids: readonly string[],
  values: { readonly all?: boolean; readonly group?: string },
): DeadLetterSelection | undefined {
  if (values.all && ids.length === 0) return { all: true, ...(values.group ? { groupId: values.group } : {}) }
  if (!values.all && ids.length > 0) return { ids }
  return undefined
}

async function listSelected(pool: pg.Pool, selection: DeadLetterSelection): Promise<DeadLetter[]> {
  const letters = await listDeadLetters(pool, 'all' in selection ? { groupId: selection.groupId } : {})
  return 'ids' in selection ? letters.filter((l) => selection.ids.includes(l.id)) : letters
}

/**
 * Waits until each re-drive asked for was done (the dead letter is gone) or failed again (it stays, no
 * longer asked for), and says which. Exit code 0 when all were applied, 1 otherwise.
 */
async function waitForRedrive(
  pool: pg.Pool,
  asked: readonly DeadLetter[],
  io: CommandOutput,
  wait: RedriveWait,
): Promise<number> {
  const deadline = Date.now() + (wait.timeoutMs ?? 60_000)
  const ids = new Set(asked.map((l) => l.id))
  for (;;) {
    const now = (await listDeadLetters(pool)).filter((l) => ids.has(l.id))
    const pending = now.filter((l) => l.redriveRequestedAt !== null)
    if (pending.length === 0 || Date.now() > deadline) {
      const failed = now.filter((l) => l.redriveRequestedAt === null)
      io.out(
        `Re-driven: ${ids.size - now.length} applied, ${failed.length} failed again, ${pending.length} waiting.`,
      )
      for (const l of failed) io.out(`  ${l.id} failed again: ${l.error}`)
      if (pending.length > 0)
        io.out(
          `  still waiting for a running consumer of ${[...new Set(pending.map((l) => l.groupId))].join(', ')}: is the service running?`,
        )
      return now.length === 0 ? 0 : 1
    }
    await new Promise((resolve) => setTimeout(resolve, wait.pollMs ?? 250))
  }
}

function table(letters: readonly DeadLetter[]): string[] {
  const rows = letters.map((l) => [
    l.id,
    l.groupId,
    l.eventType ?? '(not an event)',
    l.streamId ?? '',
    l.chatbotId ?? '',
    String(l.attempts),
    l.deadLetteredAt,
    l.redriveRequestedAt ? 're-drive asked' : '',
    oneLine(l.error, 80),
  ])
  const header = ['id', 'group', 'event', 'stream', 'chatbot', 'attempts', 'set aside at', 'state', 'error']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  return [header, ...rows].map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  )
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ')
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}
