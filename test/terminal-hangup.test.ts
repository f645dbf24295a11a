/**
 * Regression (mend8's leftover, mend9): `npm start` had no SIGHUP handler, so closing its terminal ended the
 * service at once, leaving its embedded Postgres (in a process group of its own) running for nobody until
 * the next start stopped it. Handled like SIGTERM, the shutdown's first log line to the closed terminal
 * failed with EIO, which pino's output (sonic-boom) then retried for ever at exit: the process never ended,
 * and its server was never stopped. Both are done here: a SIGHUP, and a terminal really closed (a pty).
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '@cas/db'
import { afterEach, describe, expect, it } from 'vitest'
import { postmasterPid } from './support/as-deployed.ts'
import { alive, embeddedDataDir } from './support/embedded-postgres.ts'
import { modelConfigEnv } from './support/model.ts'
import { waitFor } from './support/wait.ts'
import { spawnWorker } from './support/worker-process.ts'

const ALL_IN_ONE = fileURLToPath(new URL('../services/all-in-one/src/main.ts', import.meta.url))
const REPLAY = fileURLToPath(new URL('../services/projector/src/replay-cli.ts', import.meta.url))
const scratch: string[] = []
const leftovers: number[] = []

afterEach(async () => {
  for (const pid of leftovers.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL')
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** `npm start`'s service on its own DATA_DIR (the embedded Postgres in `dir`), logging at info. */
async function serviceEnv(dir: string): Promise<Record<string, string>> {
  return {
    DATABASE_URL: '',
    QUERY_DATABASE_URL: '',
    KAFKA_BROKERS: '',
    REDIS_URL: '',
    DATA_DIR: path.dirname(dir),
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ...modelConfigEnv(),
  }
}

/**
 * Runs a command in a terminal of its own (a pty, the command its session's leader) until it prints
 * READY_LINE; closes the terminal on a line on stdin; prints one JSON line as each happens.
 */
const IN_A_TERMINAL = `
import json, os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
ready = os.environ['READY_LINE'].encode()
out = b''
deadline = time.time() + 180
while ready not in out and time.time() < deadline:
    if select.select([fd], [], [], 1)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
print(json.dumps({'pid': pid, 'ready': ready in out, 'output': out.decode(errors='replace')[-3000:]}), flush=True)
sys.stdin.readline()
os.close(fd)
_, status = os.waitpid(pid, 0)
print(json.dumps({'code': os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                  'signal': os.WTERMSIG(status) if os.WIFSIGNALED(status) else None}), flush=True)
`

/**
 * `command` run in a terminal of its own (IN_A_TERMINAL) with `env` on top of this process's: `report(n)`
 * waits for the terminal's n-th report (1: the command said READY_LINE, 2: it ended after `close()`).
 */
function inATerminal(command: readonly string[], env: Record<string, string>) {
  const terminal = spawn('python3', ['-c', IN_A_TERMINAL, ...command], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  leftovers.push(terminal.pid!)
  const reports: Record<string, unknown>[] = []
  let pending = ''
  terminal.stdout.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines) if (line.trim()) reports.push(JSON.parse(line))
  })
  return {
    report: (n: number, timeoutMs: number) =>
      waitFor(() => reports[n - 1], { timeoutMs, intervalMs: 100, what: `the terminal's report ${n}` }),
    close: () => terminal.stdin.write('close\n'),
    ended: new Promise((resolve) => terminal.once('exit', resolve)),
  }
}

describe('npm start when its terminal goes away', () => {
  it('on SIGHUP shuts down as on SIGTERM: stops its embedded Postgres and exits 0', async () => {
    // Given: the service running on its own embedded Postgres
    const dir = await embeddedDataDir('cas-hangup-', scratch)
    const service = spawnWorker(await serviceEnv(dir), ALL_IN_ONE)
    leftovers.push(service.process.pid!)
    await service.waitForLine((l) => l.includes('conversation analytics is up'), 180_000)
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)

    // When: its terminal hangs up (SIGHUP)
    const exited = new Promise<number | null>((resolve) => service.process.once('exit', resolve))
    service.process.kill('SIGHUP')

    // Then: it shut down, stopping its server; nothing runs on for nobody
    expect(await exited).toBe(0)
    expect(service.lines.some((l) => l.includes('"signal":"SIGHUP"') && l.includes('shutting down'))).toBe(
      true,
    )
    expect(alive(postmaster)).toBe(false)
    expect(existsSync(`${dir}.owner`)).toBe(false)
  }, 300_000)

  it('closed (a real terminal, hung up): stops its embedded Postgres, though the terminal it logs to is gone', async () => {
    // Given: the service running in a terminal, on its own embedded Postgres
    const dir = await embeddedDataDir('cas-hangup-', scratch)
    const { report, close, ended } = inATerminal([process.execPath, '--import', 'tsx', ALL_IN_ONE], {
      ...(await serviceEnv(dir)),
      READY_LINE: 'conversation analytics is up',
    })
    const ready = await report(1, 200_000)
    if (typeof ready?.pid === 'number') leftovers.push(ready.pid)
    expect(ready?.ready, String(ready?.output)).toBe(true)
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)
    expect(alive(postmaster)).toBe(true)

    // When: the terminal is closed
    close()

    // Then: the service ended (before: the signal ended it at once, or, handled, it never did), and its
    // server was stopped and its owner file removed. Its exit status is not ours to assert: Node 20 aborts
    // in its own last step (ResetStdio cannot restore the terminal that is gone), after everything here.
    expect(await report(2, 90_000)).toBeDefined()
    await ended
    expect(alive(postmaster)).toBe(false)
    expect(existsSync(`${dir}.owner`)).toBe(false)
  }, 400_000)
})

describe('an operator CLI when its terminal goes away', () => {
  it('closed while it runs (a real terminal, hung up): stops the embedded Postgres it started, though it logs on its way out', async () => {
    // Given: `npm run replay` in a terminal, starting its own embedded Postgres, logging at debug
    const dir = await embeddedDataDir('cas-hangup-cli-', scratch)
    const { report, close, ended } = inATerminal(
      [process.execPath, '--import', 'tsx', REPLAY, 'read-models'],
      {
        DATABASE_URL: '',
        KAFKA_BROKERS: '',
        DATA_DIR: path.dirname(dir),
        LOG_LEVEL: 'debug',
        READY_LINE: 'starting embedded Postgres',
      },
    )
    const started = await report(1, 200_000)
    if (typeof started?.pid === 'number') leftovers.push(started.pid)
    expect(started?.ready, String(started?.output)).toBe(true)
    const postmaster = await waitFor(() => postmasterPid(dir), { timeoutMs: 120_000, what: 'its server' })
    leftovers.push(postmaster)

    // When: the terminal is closed while the CLI opens its database (initdb, start, migrations)
    close()

    // Then: it ended, having stopped its server (before: its first log line to the closed terminal failed
    // with EIO, retried for ever by pino's default output, and the CLI never ended, its server up). Its exit
    // status is not asserted, for the reason above.
    expect(await report(2, 90_000)).toBeDefined()
    await ended
    expect(alive(postmaster)).toBe(false)
    expect(existsSync(`${dir}.owner`)).toBe(false)
  }, 400_000)
})
