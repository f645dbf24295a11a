/**
 * npm run republish
 *
 * For a database restored from a backup in Kafka mode, moving to new topics (docs/operations.md,
 * Backups): has the relay publish the whole journal from its start (its checkpoint emptied), so that the
 * topics of the new KAFKA_TOPIC_PREFIX hold all of it, not only what was committed since the backup. Run
 * with every service stopped (refused while a relay runs), on the same DATA_DIR (or DATABASE_URL) as
 * `npm start`; then start every service with the new prefix.
 */
import { parseConfig } from '@cas/config'
import { republishJournal } from '@cas/eventlog'
import { cliLog, openCliInfrastructure, withChosenDataDir } from '@cas/platform'
import { RELAY_CONFIG } from './config.ts'

const parsed = parseConfig(RELAY_CONFIG, process.env)
const log = cliLog(parsed.LOG_LEVEL)
const config = withChosenDataDir(parsed, process.env, log)
if (!config.KAFKA_BROKERS) {
  console.error('No KAFKA_BROKERS: the journal is the event log and no relay publishes it; nothing to do.')
  process.exit(1)
}
const infra = await openCliInfrastructure(config, log, 'republish')
let code = 1
try {
  const done = await republishJournal(infra.pool)
  if (!done) {
    console.error('A relay is running on this database: stop every service first, then run this again.')
  } else {
    console.log(
      `The relay's checkpoint is emptied: the next relay publishes the whole journal (${done.events} events) from its start. ` +
        `Start every service with a KAFKA_TOPIC_PREFIX whose topics do not exist yet` +
        `${config.KAFKA_TOPIC_PREFIX ? ` (now: "${config.KAFKA_TOPIC_PREFIX}")` : ''}; under the old topics it would publish the journal there again.`,
    )
    code = 0
  }
} finally {
  await infra.close()
}
process.exit(code)
