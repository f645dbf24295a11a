/**
 * npm run reanalyze -- --chatbot <id> [--since <date>]
 *
 * Sends the chatbot's past messages (captured since the date, all by default) through the analyzer the
 * configuration names now, and waits until they are analyzed. The results carry that analyzer's name and
 * version, and the read models show them, replacing earlier results. Same configuration as `npm start`.
 */
import { parseArgs } from 'node:util'
import { parseConfig } from '@cas/config'
import { analyzerId } from '@cas/events'
import { cliLog, openCliInfrastructure, withChosenDataDir } from '@cas/platform'
import { analysisSettings } from './app.ts'
import { ANALYSIS_CONFIG } from './config.ts'
import { AnalysisJobRunner } from './job-runner.ts'
import { createAnalyzer } from './providers/index.ts'
import { enqueueReanalysis } from './reanalyze.ts'

const USAGE = 'usage: npm run reanalyze -- --chatbot <id> [--since <ISO 8601 date>]'
let chatbot: string | undefined
let since: Date | undefined
try {
  const { values } = parseArgs({ options: { chatbot: { type: 'string' }, since: { type: 'string' } } })
  chatbot = values.chatbot
  since = values.since === undefined ? undefined : new Date(values.since)
} catch {}
if (!chatbot || !/^[0-9a-f-]{36}$/i.test(chatbot) || (since && Number.isNaN(since.getTime()))) {
  console.error(USAGE)
  process.exit(64)
}

const parsed = parseConfig(ANALYSIS_CONFIG, process.env)
const log = cliLog(parsed.LOG_LEVEL)
// The same DATA_DIR as `npm start` picks (see withChosenDataDir), to find its data and running Postgres.
const config = withChosenDataDir(parsed, process.env, log)
const infra = await openCliInfrastructure(config, log, 'reanalyze')
try {
  const analyzer = await createAnalyzer(config, (msg, fields) => log.warn(fields ?? {}, msg))
  // The analyzer that will run (the model, or its fallback) is part of each job's identity.
  await analyzer.ready
  const { keys, alreadyRead } = await enqueueReanalysis(infra.pool, infra.keyring, {
    chatbotId: chatbot,
    since,
    analyzer: analyzer.info,
    now: new Date(),
  })
  // A capture an earlier run of this analyzer queued is not queued again (its job is keyed by capture and
  // analyzer), nor one it read when it came in.
  console.log(
    `${keys.length} captures to analyse with ${analyzerId(analyzer.info)}` +
      (alreadyRead > 0 ? ` (${alreadyRead} it already read left out)` : ''),
  )
  const jobRunner = new AnalysisJobRunner({ pool: infra.pool, analyzer, ...analysisSettings(config) })
  jobRunner.start()
  try {
    for (;;) {
      const { rows } = await infra.pool.query<{ open: number; dead: number }>(
        `SELECT count(*) FILTER (WHERE status IN ('pending', 'running'))::int AS open,
                count(*) FILTER (WHERE status = 'dead')::int AS dead
           FROM analysis_jobs WHERE source_event_id = ANY($1)`,
        [keys],
      )
      const { open, dead } = rows[0]!
      console.log(`${keys.length - open} of ${keys.length} done${dead ? ` (${dead} failed for good)` : ''}`)
      if (open === 0) break
      await new Promise((resolve) => setTimeout(resolve, 1_000))
    }
  } finally {
    await jobRunner.stop()
    await analyzer.close?.()
  }
} finally {
  await infra.close()
}
