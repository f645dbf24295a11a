import type { RecordedEvent } from '@cas/events'
import type pg from 'pg'

type ReanalysisEvent =
  | RecordedEvent<'analysis.reanalysis-started'>
  | RecordedEvent<'analysis.reanalysis-progressed'>
  | RecordedEvent<'analysis.reanalysis-finished'>
  | RecordedEvent<'analysis.reanalysis-failed'>

/**
 * rm_reanalysis: each chatbot's latest re-analysis (one row a chatbot): started replaces the row, progress
 * and the finish update it when they are of the re-analysis it holds; a failure (never started) replaces
 * it too, status failed with its reason. A chatbot's events come in stream
 * order; a batch has few of them, written one by one.
 */
export class ReanalysisChanges {
  private readonly events: ReanalysisEvent[] = []

  add(event: ReanalysisEvent): void {
    this.events.push(event)
  }

  async flush(client: pg.ClientBase): Promise<void> {
    const events = this.events.splice(0)
    for (const e of events) {
      switch (e.type) {
        case 'analysis.reanalysis-started':
          await client.query(
            `INSERT INTO rm_reanalysis (org_id, chatbot_id, reanalysis_id, status, analyzer, done, failed, total, started_at, finished_at)
             VALUES ($1, $2, $3, 'running', $4, 0, 0, $5, $6, NULL)
             ON CONFLICT (chatbot_id) DO UPDATE SET reanalysis_id = $3, status = 'running', analyzer = $4, done = 0,
               failed = 0, total = $5, started_at = $6, finished_at = NULL, reason = NULL`,
            [e.orgId, e.chatbotId, e.payload.reanalysisId, e.payload.analyzer, e.payload.total, e.occurredAt],
          )
          break
        case 'analysis.reanalysis-progressed':
          await client.query(
            `UPDATE rm_reanalysis SET done = greatest(done, $3) WHERE chatbot_id = $1 AND reanalysis_id = $2`,
            [e.chatbotId, e.payload.reanalysisId, e.payload.done],
          )
          break
        case 'analysis.reanalysis-finished':
          await client.query(
            `UPDATE rm_reanalysis SET status = 'finished', done = $3, failed = $4, finished_at = $5
              WHERE chatbot_id = $1 AND reanalysis_id = $2`,
            [e.chatbotId, e.payload.reanalysisId, e.payload.done, e.payload.failed, e.occurredAt],
          )
          break
        case 'analysis.reanalysis-failed':
          await client.query(
            `INSERT INTO rm_reanalysis (org_id, chatbot_id, reanalysis_id, status, analyzer, done, failed, total, started_at, finished_at, reason)
             VALUES ($1, $2, $3, 'failed', $4, 0, 0, 0, $5, $5, $6)
             ON CONFLICT (chatbot_id) DO UPDATE SET reanalysis_id = $3, status = 'failed', analyzer = $4, done = 0,
               failed = 0, total = 0, started_at = $5, finished_at = $5, reason = $6`,
            [
              e.orgId,
              e.chatbotId,
              e.payload.reanalysisId,
              e.payload.analyzer,
              e.occurredAt,
              e.payload.reason,
            ],
          )
          break
      }
    }
  }
}
