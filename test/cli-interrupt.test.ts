/**
 * Regression (review5's item 4, mend8): an operator CLI had no SIGINT handler. Ctrl-C in its terminal
 * ended it at once, handing nothing over, and its embedded Postgres stopped only because it was in the
 * terminal's process group too. In a process group of its own since (so that npm start's Ctrl-C no longer
 * stops a server another process uses), a CLI ended by the signal would leave it running for nobody: the
 * CLI now leaves it (stops it, or hands it over to the process using it) and exits 130.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { type RunningPostgres, useRunningEmbeddedPostgres } from '@cas/db'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { alive, embeddedDataDir } from './support/embedded-postgres.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const scratch: string[] = []
const leftovers: number[] = []
const used: RunningPostgres[] = []

afterEach(async () => {
  for (const pid of leftovers.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL')
  for (const server of used.splice(0)) await server.stop()
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true })
})

function postmasterPid(dir: string): number | undefined {
  const file = path.join(dir, 'postmaster.pid')
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined
}

/**
 * A CLI (openCliInfrastructure on DATA_DIR, embedded Postgres) that says `ready` once open and then works
 * until interrupted, in a process group of its own as one run in a terminal is.
 */
async function cliInItsTerminal(dataDir: string): Promise<ChildProcessByStdio<Writable, Readable, null>> {
  const script = path.join(path.dirname(dataDir), 'cli.mts')
  const require = createRequire(import.meta.url)
  await writeFile(
    script,
    `import { INFRASTRUCTURE_GROUPS, parseConfig } from ${JSON.stringify(path.join(ROOT, 'libs/config/src/index.ts'))}
    import { openCliInfrastructure } from ${JSON.stringify(path.join(ROOT, 'libs/platform/src/index.ts'))}
    import { pino } from ${JSON.stringify(require.resolve('pino'))}
    const config = parseConfig(INFRASTRUCTURE_GROUPS, process.env)
    const infra = await openCliInfrastructure(config, pino({ level: 'warn' }), 'probe')
    await infra.pool.query('SELECT 1')
    console.log('ready')
    setInterval(() => {}, 1000)\n`,
  )
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: path.dirname(dataDir), LOG_LEVEL: 'warn' }
  for (const name of ['DATABASE_URL', 'KAFKA_BROKERS', 'QUERY_DATABASE_URL']) delete env[name]
  const cli = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
    detached: true,
  })
  leftovers.push(cli.pid!)
  await new Promise<void>((resolve, reject) => {
    cli.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve())
    cli.once('exit', (code) => reject(new Error(`the CLI exited (${code})`)))
  })
  return cli
}

/**
 * Ctrl-C in the CLI's terminal (SIGINT to its process group), or the terminal closed (SIGHUP); its exit code, or
 * the signal that ended it.
 */
function interrupt(
  cli: ChildProcessByStdio<Writable, Readable, null>,
  signal: NodeJS.Signals = 'SIGINT',
): Promise<number | string | null> {
  const exited = new Promise<number | string | null>((resolve) =>
    cli.once('exit', (code, signal) => resolve(signal ?? code)),
  )
  process.kill(-cli.pid!, signal)
  return exited
}

describe('an operator CLI interrupted (Ctrl-C)', () => {
  it('stops the embedded Postgres it started, which nothing else uses, and exits 130', async () => {
    // Given: a CLI that started the embedded server on its DATA_DIR
    const dir = await embeddedDataDir('cas-cli-interrupt-', scratch)
    const cli = await cliInItsTerminal(dir)
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)
    expect(alive(postmaster)).toBe(true)

    // When: Ctrl-C in its terminal
    // Then: it exits as interrupted, having stopped its server: nothing runs on for nobody
    expect(await interrupt(cli)).toBe(130)
    expect(alive(postmaster)).toBe(false)
    expect(existsSync(`${dir}.owner`)).toBe(false)
  })

  it('hands the server over to the process using it, whose session lives on, and exits 130', async () => {
    // Given: a CLI that started the embedded server, and this process using it, a session open
    const dir = await embeddedDataDir('cas-cli-interrupt-', scratch)
    const cli = await cliInItsTerminal(dir)
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)
    const user = (await useRunningEmbeddedPostgres(dir))!
    used.push(user)
    const session = new pg.Client({ connectionString: user.url })
    session.on('error', () => {})
    await session.connect()
    try {
      // When: Ctrl-C in the CLI's terminal
      expect(await interrupt(cli)).toBe(130)

      // Then: the same server runs on, owned by this process, and the session answers
      expect(postmasterPid(dir)).toBe(postmaster)
      expect(readFileSync(`${dir}.owner`, 'utf8').trim()).toBe(String(process.pid))
      expect((await session.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    } finally {
      await session.end().catch(() => {})
    }

    // And: leaving, this process stops it
    await used.splice(0)[0]!.stop()
    expect(alive(postmaster)).toBe(false)
  })

  it('closing its terminal (SIGHUP) stops the embedded Postgres it started, and exits 129', async () => {
    // Given: a CLI that started the embedded server on its DATA_DIR
    const dir = await embeddedDataDir('cas-cli-interrupt-', scratch)
    const cli = await cliInItsTerminal(dir)
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)

    // When: its terminal hangs up (SIGHUP to its process group; before, the signal ended it at once)
    // Then: it exits as hung up, having stopped its server, as on Ctrl-C
    expect(await interrupt(cli, 'SIGHUP')).toBe(129)
    expect(alive(postmaster)).toBe(false)
    expect(existsSync(`${dir}.owner`)).toBe(false)
  })
})
