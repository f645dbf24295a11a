import type { JournalRecord } from '@cas/eventlog'
import { analyzerId } from '@cas/events'
import { type Keyring, openRecords } from '@cas/keyring'
import type pg from 'pg'
import type { AnalyzerInfo } from './analyzer.ts'
import { enqueueJobs, jobFromCapture, type NewJob } from './jobs.ts'
import { uuidFromText } from './topics/ids.ts'

export interface ReanalysisRequest {
  readonly chatbotId: string
  /** Only messages captured at or after this time. */
  readonly since?: Date
  /** The analyzer that will run: part of each job's identity, so a version re-analyzes once. */
  readonly analyzer: AnalyzerInfo
  /**
   * A run a lead asked for (its reanalysisId), also part of each job's identity: every such run analyses
   * every capture again, so its conversations' signals are decided with the settings of now (a custom
   * signal added since, one turned back on). Without it (`npm run reanalyze`) a version runs once.
   */
  readonly run?: string
  readonly now: Date
}

/** What enqueueReanalysis asked for. */
export interface QueuedReanalysis {
  /** The ids of the jobs it asked for (those an earlier call queued included). */
  readonly keys: string[]
  /**
   * Without a run: the captures left out because the analyzer already read them (every message of theirs
   * with a result has this analyzer's as its latest). 0 for a run, which reads every capture again.
   */
  readonly alreadyRead: number
}

/**
 * Queues every message the chatbot captured (since a date) for analysis by the current analyzer, one job
 * per original capture, read from the journal. Jobs are keyed by (capture, analyzer version, run): running
 * it again for the same version and run (or without a run) queues nothing new. Without a run (`npm run
 * reanalyze`), a capture whose messages this analyzer already read (the latest result of each of its
 * analysed messages is this analyzer's: analysis_results) is left out: a first run after an upgrade reads
 * again only what an earlier analyzer read (trial8: it queued all 336 captures, 160 of them read by the
 * same analyzer when they came in, whose own jobs are keyed by the capture alone).
 */
export async function enqueueReanalysis(
  pool: pg.ClientBase | pg.Pool,
  keyring: Keyring,
  request: ReanalysisRequest,
): Promise<QueuedReanalysis> {
  const { rows } = await pool.query<JournalRecord & { occurredAt: Date }>(
    `SELECT position::text, event_id AS id, stream_type AS "streamType", type, version, occurred_at AS "occurredAt", org_id AS "orgId",
            chatbot_id AS "chatbotId", stream_id AS "streamId", stream_version AS "streamVersion", payload, metadata
       FROM event_journal
      WHERE stream_type = 'conversation' AND chatbot_id = $1 AND type = 'conversation.messages-captured'
        AND ($2::timestamptz IS NULL OR occurred_at >= $2)
      ORDER BY event_journal.position`,
    [request.chatbotId, request.since ?? null],
  )
  const jobs: NewJob[] = []
  const records = rows.map((row) => ({ ...row, occurredAt: row.occurredAt.toISOString() }))
  for (const opened of await openRecords(pool, keyring, records)) {
    if (!opened.ok || opened.event.type !== 'conversation.messages-captured') continue
    jobs.push(
      jobFromCapture(opened.event, {
        sourceEventId: reanalysisJobKey(opened.event.id, request.analyzer, request.run),
        causeEventId: opened.event.id,
      }),
    )
  }
  const queued: NewJob[] = []
  for (let i = 0; i < jobs.length; i += 500) {
    const chunk = jobs.slice(i, i + 500)
    const read = request.run === undefined ? await readBy(pool, chunk, request.analyzer) : new Set<NewJob>()
    const left = chunk.filter((j) => !read.has(j))
    await enqueueJobs(pool, left, request.now)
    queued.push(...left)
  }
  return { keys: queued.map((j) => j.sourceEventId), alreadyRead: jobs.length - queued.length }
}

/** The jobs whose messages the analyzer already read: each analysed message's latest result is its. */
async function readBy(
  pool: pg.ClientBase | pg.Pool,
  jobs: readonly NewJob[],
  analyzer: AnalyzerInfo,
): Promise<Set<NewJob>> {
  if (jobs.length === 0) return new Set()
  // By the primary key's conversation_id: a chunk reads its own conversations' rows, never the chatbot's.
  const { rows } = await pool.query<{ conversation_id: string; message_id: string; analyzer: string }>(
    'SELECT conversation_id, message_id, analyzer FROM analysis_results WHERE conversation_id = ANY($1::uuid[])',
    [[...new Set(jobs.map((j) => j.conversationId))]],
  )
  const latest = new Map(rows.map((r) => [`${r.conversation_id}\0${r.message_id}`, r.analyzer]))
  const name = analyzerId(analyzer)
  return new Set(
    jobs.filter((job) => {
      const results = job.messages.flatMap((m) => latest.get(`${job.conversationId}\0${m.id}`) ?? [])
      return results.length > 0 && results.every((a) => a === name)
    }),
  )
}

/** A UUID-shaped key for (capture event, analyzer version), and the run when one was asked for. */
export function reanalysisJobKey(eventId: string, analyzer: AnalyzerInfo, run?: string): string {
  const key = `${eventId}\0${analyzerId(analyzer)}`
  return uuidFromText(run === undefined ? key : `${key}\0${run}`)
}
