/**
 * What the embedded Postgres said during a benchmark: its deadlocks, its other errors and its slow
 * statements, read from the server's log (its stderr, default `log_line_prefix` '%m [%p] '). A deadlock
 * costs `deadlock_timeout` (1 s) and a failed, retried batch: the projector's rm_topics deadlocks halved
 * DSTC11's whole-pipeline rate at random for weeks before anyone read the log (bench/FINDINGS.md,
 * "Projector deadlocks on rm_topics"). The benchmarks that start their own Postgres for a throughput
 * figure (bench:quality, bench:analysis) watch the log and print this beside the figure.
 */

/** Statements at or over this are "slow": logged by the server (log_min_duration_statement) and counted. */
export const SLOW_STATEMENT_MS = 100

/** The server settings a watched log needs: every statement of SLOW_STATEMENT_MS or more logged. */
export const WATCHED_POSTGRES_SETTINGS: Readonly<Record<string, string>> = {
  log_min_duration_statement: String(SLOW_STATEMENT_MS),
}

/** One entry of the log: its first line's prefix parsed, its continuation lines (a tab first) joined. */
interface LogRecord {
  readonly pid: string
  readonly severity: string
  readonly text: string
}

export interface SlowStatement {
  readonly ms: number
  /** The statement's text on one line (whitespace collapsed). */
  readonly statement: string
}

export interface PostgresLogSummary {
  /** `ERROR:  deadlock detected`: one per transaction Postgres failed to break a deadlock. */
  readonly deadlocks: number
  /** The statements the deadlocks failed (their STATEMENT line), in log order. */
  readonly deadlockStatements: readonly string[]
  /** ERROR, FATAL and PANIC entries other than deadlocks. */
  readonly otherErrors: number
  /** The other errors by message, most frequent first. */
  readonly errorMessages: readonly { readonly message: string; readonly count: number }[]
  /** Statements that took SLOW_STATEMENT_MS or more (each step of the extended protocol its own), slowest first. */
  readonly slow: readonly SlowStatement[]
}

const PREFIX = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[(\d+)\] ([A-Z][A-Z0-9]*): {1,2}(.*)$/
const DURATION = /^duration: (\d+(?:\.\d+)?) ms {2}(?:statement|(?:execute|parse|bind) [^:]*): ([\s\S]*)$/
const ERRORS = new Set(['ERROR', 'FATAL', 'PANIC'])

function records(lines: Iterable<string>): LogRecord[] {
  const out: { pid: string; severity: string; lines: string[] }[] = []
  for (const line of lines) {
    const m = PREFIX.exec(line)
    if (m) out.push({ pid: m[1]!, severity: m[2]!, lines: [m[3]!] })
    // A multi-line message (a statement's text, a deadlock's detail) goes on in lines starting with a tab.
    else if (line.startsWith('\t') && out.length > 0) out.at(-1)!.lines.push(line.slice(1))
    // Anything else (initdb's output, our own notes) is not the server's log.
  }
  return out.map((r) => ({ pid: r.pid, severity: r.severity, text: r.lines.join('\n') }))
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim()

/** Reads the log's lines (as the server wrote them, any order of processes). */
export function summarisePostgresLog(
  lines: Iterable<string>,
  opts: { slowMs?: number } = {},
): PostgresLogSummary {
  const slowMs = opts.slowMs ?? SLOW_STATEMENT_MS
  const all = records(lines)
  let deadlocks = 0
  const deadlockStatements: string[] = []
  const messages = new Map<string, number>()
  const slow: SlowStatement[] = []
  for (const [i, r] of all.entries()) {
    if (ERRORS.has(r.severity)) {
      if (r.severity === 'ERROR' && r.text === 'deadlock detected') {
        deadlocks++
        // Its DETAIL, HINT, CONTEXT and STATEMENT follow, from the same process.
        const statement = all
          .slice(i + 1, i + 6)
          .find((s) => s.pid === r.pid && (s.severity === 'STATEMENT' || ERRORS.has(s.severity)))
        if (statement?.severity === 'STATEMENT') deadlockStatements.push(oneLine(statement.text))
      } else {
        const message = `${r.severity === 'ERROR' ? '' : `${r.severity}: `}${oneLine(r.text)}`
        messages.set(message, (messages.get(message) ?? 0) + 1)
      }
      continue
    }
    if (r.severity !== 'LOG') continue
    const d = DURATION.exec(r.text)
    if (d && Number(d[1]) >= slowMs) slow.push({ ms: Number(d[1]), statement: oneLine(d[2]!) })
  }
  const errorMessages = [...messages]
    .map(([message, count]) => ({ message, count }))
    .sort((a, b) => b.count - a.count || a.message.localeCompare(b.message))
  return {
    deadlocks,
    deadlockStatements,
    otherErrors: errorMessages.reduce((n, e) => n + e.count, 0),
    errorMessages,
    slow: slow.sort((a, b) => b.ms - a.ms),
  }
}

export const truncate = (text: string, max = 100) =>
  text.length <= max ? text : `${text.slice(0, max - 1)}…`

/** The summary in a few words: counts, the most frequent errors and the three slowest statements. */
export function postgresLogLines(s: PostgresLogSummary, opts: { slowest?: number } = {}): string[] {
  const slowest = s.slow.slice(0, opts.slowest ?? 3)
  return [
    `${s.deadlocks} "deadlock detected"${s.deadlocks > 0 ? ' (PROBLEM: each costs deadlock_timeout and a retried batch)' : ''}, ${s.otherErrors} other errors, ${s.slow.length} statements over ${SLOW_STATEMENT_MS} ms`,
    ...s.deadlockStatements.slice(0, 3).map((t) => `deadlocked: ${truncate(t)}`),
    ...s.errorMessages.slice(0, 3).map((e) => `error ×${e.count}: ${truncate(e.message)}`),
    ...slowest.map((q) => `${q.ms.toFixed(0)} ms: ${truncate(q.statement)}`),
  ]
}

/**
 * The log as the server writes it: every line kept (appended to `file` too when given), read back by
 * spans between marks (a set's run, in a benchmark that runs sets one after the other).
 */
export interface PostgresLogWatch {
  add(line: string): void
  /** The position now: pass it to summarise() to read what came after. */
  mark(): number
  summarise(from?: number, to?: number): PostgresLogSummary
}

export function watchPostgresLog(): PostgresLogWatch {
  const lines: string[] = []
  return {
    add: (line) => lines.push(line),
    mark: () => lines.length,
    summarise: (from = 0, to = lines.length) => summarisePostgresLog(lines.slice(from, to)),
  }
}
