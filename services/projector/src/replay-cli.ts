/**
 * npm run replay -- <projection>     (read-models, or all)
 *
 * Rebuilds a projection from the beginning of the event log (Kafka from the earliest offset with
 * KAFKA_BROKERS, the journal otherwise) into shadow tables and swaps them in atomically while the old ones
 * keep serving. Resumes a rebuild that was interrupted (unless a migration since changed the read models'
 * tables: it is then abandoned, saying why, and a new one starts). Works on the same DATA_DIR (or DATABASE_URL) as
 * `npm start`, whether the service is running or not. Prints progress: events/s, lag and ETA.
 *
 * Exit code 1, with one line on stderr, when another rebuild ended the run under it (abandoned it, or
 * swapped it in) or started one at the same moment: `RebuildStoppedError`, after which it wrote nothing.
 * Exit code 2, with one line on stderr, when it swapped in read models without some events it could not
 * apply (set aside as dead letters, now the live projector's): done, but not whole (trial8: an older
 * version's rebuild set aside every event of a newer version and said only that it had finished).
 */
import { parseConfig } from '@cas/config'
import { cliLog, openCliInfrastructure, withChosenDataDir } from '@cas/platform'
import { PROJECTOR_CONFIG } from './config.ts'
import { READ_MODELS, RebuildStoppedError, rebuildReadModels } from './rebuild.ts'
import { replayProgress } from './replay-progress.ts'

const PROJECTIONS = [READ_MODELS, 'all']
const projection = process.argv[2]
if (!projection || !PROJECTIONS.includes(projection)) {
  console.error(`usage: npm run replay -- <${PROJECTIONS.join('|')}>`)
  console.error('  read-models: chatbots, conversations, messages and the analytics rollups (the projector)')
  process.exit(64)
}

// The projector's variables only, as the projector reads them: a rebuild is the projector's work.
const parsed = parseConfig(PROJECTOR_CONFIG, process.env)
const log = cliLog(parsed.LOG_LEVEL)
// The same DATA_DIR as `npm start` picks (see withChosenDataDir), to find its data and running Postgres.
const config = withChosenDataDir(parsed, process.env, log)
const infra = await openCliInfrastructure(config, log, 'replay')
const progress = replayProgress(process.stdout)
try {
  const result = await rebuildReadModels({
    pool: infra.pool,
    keyring: infra.keyring,
    eventLog: infra.eventLog,
    onProgress: progress.show,
    onAbandoned: ({ runId, reason }) => console.log(`abandoned rebuild ${runId}, starting afresh: ${reason}`),
  })
  progress.end()
  console.log(
    `${result.resumed ? 'resumed and finished' : 'finished'} rebuild ${result.runId}: ` +
      `${result.applied.toLocaleString('en')} events applied, read models swapped in`,
  )
  if (result.setAside > 0) {
    console.error(
      `replay: events set aside as dead letters, which the read models lack until they are re-driven or discarded: ${result.setAside.toLocaleString('en')} ` +
        '(npm run dead-letters -- list; docs/operations.md, "Dead letters")',
    )
    process.exitCode = 2
  }
} catch (err) {
  if (!(err instanceof RebuildStoppedError)) throw err
  progress.end()
  console.error(`replay: ${err.message}`)
  process.exitCode = 1
} finally {
  await infra.close()
}
