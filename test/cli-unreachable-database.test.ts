/**
 * The operator CLIs on a database that cannot be reached. Regression (review4): each ended in Node's
 * stack trace of an unhandled rejection (`Error: connect ECONNREFUSED … at TCPConnectWrap…`); now one
 * line naming the database (never its password) and exit code 1.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'

/** A local port nothing listens on: one the system gave out and that was closed again. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

function runCli(script: string, argv: readonly string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...argv], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
    })
    child.stderr.on('data', (chunk) => {
      err += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out, err }))
  })
}

const CLIS: readonly [string, string, readonly string[]][] = [
  ['journal-conflicts', 'services/projector/src/journal-conflicts-cli.ts', ['list']],
  ['dead-letters', 'services/projector/src/dead-letters-cli.ts', ['list']],
  ['replay', 'services/projector/src/replay-cli.ts', ['read-models']],
  ['republish', 'services/relay/src/republish-cli.ts', []],
  ['reanalyze', 'services/analysis/src/reanalyze-cli.ts', ['--chatbot', randomUUID()]],
]

describe('the operator CLIs on a database that cannot be reached', () => {
  it.each(CLIS)(
    '%s says which database in one line and exits 1, without a stack trace',
    async (name, script, argv) => {
      const port = await closedPort()
      const res = await runCli(script, argv, {
        DATABASE_URL: `postgres://operator:not-to-be-shown@127.0.0.1:${port}/cas_prod`,
        // republish needs brokers to get as far as the database; none of them is reached.
        KAFKA_BROKERS: name === 'republish' ? `127.0.0.1:${port}` : '',
      })
      expect(res.code, res.err).toBe(1)
      expect(res.out).toBe('')
      const lines = res.err.trimEnd().split('\n')
      const said = lines.filter((line) => !line.startsWith('{'))
      expect(said).toEqual([
        `${name}: cannot reach the database 127.0.0.1:${port}/cas_prod (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:${port}`,
      ])
      expect(res.err).not.toMatch(/^\s+at /m)
      expect(res.err).not.toContain('not-to-be-shown')
    },
    60_000,
  )
})
