/**
 * npm run dead-letters -- list | show <id> | redrive (<id>... | --all) | discard (<id>... | --all)
 *
 * The events the consumers (projector, analysis, rebuild) set aside because they could not apply them
 * (DESIGN.md guarantee 9): list and inspect them, re-drive them after a fix (a running member of the
 * event's consumer group applies them), or discard them. Works on the same DATA_DIR (or DATABASE_URL)
 * as `npm start`.
 */
import { parseConfig } from '@cas/config'
import { cliLog, openCliInfrastructure, withChosenDataDir } from '@cas/platform'
import { PROJECTOR_CONFIG } from './config.ts'
import { runDeadLetterCommand } from './dead-letters-command.ts'

const parsed = parseConfig(PROJECTOR_CONFIG, process.env)
const log = cliLog(parsed.LOG_LEVEL)
// The same DATA_DIR as `npm start` picks (see withChosenDataDir), to find its data and running Postgres.
const config = withChosenDataDir(parsed, process.env, log)
const infra = await openCliInfrastructure(config, log, 'dead-letters')
let code = 1
try {
  code = await runDeadLetterCommand(infra.pool, process.argv.slice(2), {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  })
} finally {
  await infra.close()
}
process.exit(code)
