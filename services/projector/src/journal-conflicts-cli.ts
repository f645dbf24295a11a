/**
 * npm run journal-conflicts -- list [--format table|json|csv] | acknowledge (<event-id>... | --all)
 *
 * After an older backup of the database was restored under the same Kafka topics: the events Kafka holds
 * that the restored journal lost, which the consumers (projector, analysis) left out and listed in
 * journal_conflicts (docs/operations.md, Backups). List them once each, to hand on, and acknowledge them
 * so that /readyz stops counting them. Works on the same DATA_DIR (or DATABASE_URL) as `npm start`.
 */
import { parseConfig } from '@cas/config'
import { cliLog, openCliInfrastructure, withChosenDataDir } from '@cas/platform'
import { PROJECTOR_CONFIG } from './config.ts'
import { runJournalConflictsCommand } from './journal-conflicts-command.ts'

const parsed = parseConfig(PROJECTOR_CONFIG, process.env)
const log = cliLog(parsed.LOG_LEVEL)
// The same DATA_DIR as `npm start` picks (see withChosenDataDir), to find its data and running Postgres.
const config = withChosenDataDir(parsed, process.env, log)
const infra = await openCliInfrastructure(config, log, 'journal-conflicts')
let code = 1
try {
  code = await runJournalConflictsCommand(infra.pool, process.argv.slice(2), {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  })
} finally {
  await infra.close()
}
process.exit(code)
