import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import { analyzerId, newEvent } from '@cas/events'
import type { Keyring } from '@cas/keyring'
import type pg from 'pg'
import type { AnalyzerInfo } from './analyzer.ts'
import { enqueueReanalysis } from './reanalyze.ts'

/**
 * Starts a re-analysis an owner or admin asked for (chatbot.reanalysis-requested), in the command
 * runner's transaction: queues the chatbot's captures for the current analyzer (enqueueReanalysis, as
 * `npm run reanalyze` does), records the run with its jobs' keys (analysis_reanalyses) and appends
 * analysis.reanalysis-started on the chatbot's topic stream. A run asked for again (redelivered) is not
 * started twice.
 */
export async function startReanalysis(
  client: pg.ClientBase,
  keyring: Keyring,
  request: {
    readonly orgId: string
    readonly chatbotId: string
    readonly reanalysisId: string
    readonly since?: Date
    readonly analyzer: AnalyzerInfo
  },
  metadata: Readonly<Record<string, string>>,
  now: () => Date,
): Promise<void> {
  const { rowCount } = await client.query('SELECT 1 FROM analysis_reanalyses WHERE reanalysis_id = $1', [
    request.reanalysisId,
  ])
  if (rowCount) return
  const { keys } = await enqueueReanalysis(client, keyring, {
    chatbotId: request.chatbotId,
    ...(request.since ? { since: request.since } : {}),
    analyzer: request.analyzer,
    // Each run asked for analyses again, even for the analyzer that ran last: the settings may have changed.
    run: request.reanalysisId,
    now: now(),
  })
  await client.query(
    `INSERT INTO analysis_reanalyses (reanalysis_id, org_id, chatbot_id, job_keys, metadata, started_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [request.reanalysisId, request.orgId, request.chatbotId, keys, JSON.stringify(metadata), now()],
  )
  await appendToStream(
    client,
    {
      streamType: 'analysis',
      streamId: request.chatbotId,
      orgId: request.orgId,
      chatbotId: request.chatbotId,
      expectedVersion: 'any',
      events: [
        newEvent('analysis.reanalysis-started', {
          reanalysisId: request.reanalysisId,
          total: keys.length,
          analyzer: analyzerId(request.analyzer),
        }),
      ],
      metadata,
    },
    { now },
  )
}

/**
 * Ends a re-analysis whose command failed as often as the command policy allows (command-runner.ts):
 * appends analysis.reanalysis-failed on the chatbot's topic stream, with a reason a lead may read.
 */
export async function failReanalysis(
  client: pg.ClientBase,
  run: {
    readonly orgId: string
    readonly chatbotId: string
    readonly reanalysisId: string
    readonly analyzer: string
    readonly attempts: number
  },
  metadata: Readonly<Record<string, string>>,
  now: () => Date,
): Promise<void> {
  await appendToStream(
    client,
    {
      streamType: 'analysis',
      streamId: run.chatbotId,
      orgId: run.orgId,
      chatbotId: run.chatbotId,
      expectedVersion: 'any',
      events: [
        newEvent('analysis.reanalysis-failed', {
          reanalysisId: run.reanalysisId,
          analyzer: run.analyzer,
          attempts: run.attempts,
          reason: `The analysis service could not queue the captures (${run.attempts} attempts). Ask again, or ask an operator to look at its log.`,
        }),
      ],
      metadata,
    },
    { now },
  )
}

/**
 * Reports the running re-analyses' progress: for each, counts its jobs still open; appends
 * analysis.reanalysis-progressed when more are done than last reported, and analysis.reanalysis-finished
 * (and forgets the run) when none is open. Returns how many runs there were.
 */
export async function reportReanalyses(pool: pg.Pool, now: () => Date): Promise<number> {
  const { rows } = await pool.query<{ reanalysis_id: string }>(
    'SELECT reanalysis_id FROM analysis_reanalyses ORDER BY started_at',
  )
  for (const { reanalysis_id } of rows) {
    await withTransaction(pool, async (client) => {
      const { rows: runs } = await client.query<{
        org_id: string
        chatbot_id: string
        done: number
        total: number
        metadata: Record<string, string>
        open: number
        dead: number
      }>(
        `SELECT r.org_id, r.chatbot_id, r.done, cardinality(r.job_keys) AS total, r.metadata,
                (SELECT count(*)::int FROM analysis_jobs j
                  WHERE j.source_event_id = ANY(r.job_keys) AND j.status IN ('pending', 'running')) AS open,
                (SELECT count(*)::int FROM analysis_jobs j
                  WHERE j.source_event_id = ANY(r.job_keys) AND j.status = 'dead') AS dead
           FROM analysis_reanalyses r WHERE r.reanalysis_id = $1 FOR UPDATE SKIP LOCKED`,
        [reanalysis_id],
      )
      const run = runs[0]
      if (!run) return
      const done = run.total - run.open
      const event =
        run.open === 0
          ? newEvent('analysis.reanalysis-finished', {
              reanalysisId: reanalysis_id,
              done: done - run.dead,
              failed: run.dead,
            })
          : done > run.done
            ? newEvent('analysis.reanalysis-progressed', {
                reanalysisId: reanalysis_id,
                done,
                total: run.total,
              })
            : undefined
      if (!event) return
      await appendToStream(
        client,
        {
          streamType: 'analysis',
          streamId: run.chatbot_id,
          orgId: run.org_id,
          chatbotId: run.chatbot_id,
          expectedVersion: 'any',
          events: [event],
          metadata: run.metadata,
        },
        { now },
      )
      if (run.open === 0)
        await client.query('DELETE FROM analysis_reanalyses WHERE reanalysis_id = $1', [reanalysis_id])
      else
        await client.query('UPDATE analysis_reanalyses SET done = $2 WHERE reanalysis_id = $1', [
          reanalysis_id,
          done,
        ])
    })
  }
  return rows.length
}
