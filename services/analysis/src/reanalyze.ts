import type { JournalRecord } from '@cas/eventlog'
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

/**
 * Queues every message the chatbot captured (since a date) for analysis by the current analyzer, one job
 * per original capture, read from the journal. Jobs are keyed by (capture, analyzer version, run): running
 * it again for the same version and run (or without a run) queues nothing new. Returns the ids of the jobs
 * it asked for.
 */
export async function enqueueReanalysis(
  pool: pg.ClientBase | pg.Pool,
  keyring: Keyring,
  request: ReanalysisRequest,
): Promise<string[]> {
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
  for (let i = 0; i < jobs.length; i += 500) await enqueueJobs(pool, jobs.slice(i, i + 500), request.now)
  return jobs.map((j) => j.sourceEventId)
}

/** A UUID-shaped key for (capture event, analyzer version), and the run when one was asked for. */
export function reanalysisJobKey(eventId: string, analyzer: AnalyzerInfo, run?: string): string {
  const key = `${eventId}\0${analyzer.name}@${analyzer.version}`
  return uuidFromText(run === undefined ? key : `${key}\0${run}`)
}
