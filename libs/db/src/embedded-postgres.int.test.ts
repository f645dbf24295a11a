/**
 * The embedded server listens on loopback, which every local user and process can reach: its superuser
 * must have a password of its own cluster, kept beside it, not one written in this repository. And it
 * must not stay down when it dies, nor run unowned when the process that started it dies.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { appendFile, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Readable } from 'node:stream'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { alive, embeddedDataDir, heldStop } from '../../../test/support/embedded-postgres.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { startTimeOf, untilNoneLeaves, whileLeaving } from './embedded-postgres-users.ts'
import {
  orphanedEmbeddedPostgres,
  passwordFileOf,
  type RunningPostgres,
  runningEmbeddedPostgres,
  startEmbeddedPostgres,
  startOrUseEmbeddedPostgres,
  stopOrphanedEmbeddedPostgres,
  useRunningEmbeddedPostgres,
} from './index.ts'

const scratch: string[] = []
const running: RunningPostgres[] = []

/** Processes a failed test could leave behind (the owner process, its orphaned server). */
const leftovers: number[] = []

afterEach(async () => {
  for (const pid of leftovers.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL')
  for (const server of running.splice(0)) await server.stop()
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true })
})

async function start(
  dataDir: string,
  alert?: (line: string) => void,
  restartDelaysMs?: number[],
): Promise<RunningPostgres> {
  const server = await startEmbeddedPostgres({
    dataDir,
    settings: { fsync: 'off' },
    ...(alert ? { alert } : {}),
    ...(restartDelaysMs ? { restartDelaysMs } : {}),
  })
  running.push(server)
  return server
}

async function stop(server: RunningPostgres): Promise<void> {
  await server.stop()
  running.splice(running.indexOf(server), 1)
}

/** The SQLSTATE a connection as `postgres` with `password` fails with, or 'connected'. */
async function connectAs(port: number, password: string): Promise<string> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' })
  try {
    await client.connect()
    return 'connected'
  } catch (err) {
    return (err as { code?: string }).code ?? String(err)
  } finally {
    await client.end().catch(() => {})
  }
}

async function query(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

function dataDir(): Promise<string> {
  return embeddedDataDir('cas-embedded-password-', scratch)
}

describe('the embedded Postgres superuser password', () => {
  it('is random per cluster, kept mode 600 beside it, and the same after a restart: the well-known one opens nothing', async () => {
    // Given a new cluster, started twice
    const dir = await dataDir()
    const first = await start(dir)
    const file = passwordFileOf(dir)
    const password = readFileSync(file, 'utf8').trim()
    const other = await dataDir()
    const second = await start(other)

    // Then the well-known password is refused, each cluster's own opens it, and the two differ
    expect(await connectAs(first.port, 'postgres')).toBe('28P01')
    expect(await connectAs(first.port, password)).toBe('connected')
    expect(password).not.toBe(readFileSync(passwordFileOf(other), 'utf8').trim())
    expect(password.length).toBeGreaterThanOrEqual(40)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(path.dirname(file)).toBe(path.dirname(dir))
    await stop(second)

    // And another process of ours finds the running server with that password
    expect(
      await connectAs(first.port, decodeURIComponent(new URL(runningEmbeddedPostgres(dir)!).password)),
    ).toBe('connected')

    // And a restart keeps it
    await stop(first)
    const again = await start(dir)
    expect(readFileSync(file, 'utf8').trim()).toBe(password)
    expect(await connectAs(again.port, password)).toBe('connected')
    expect(await connectAs(again.port, 'postgres')).toBe('28P01')
  })

  it.each([
    ['from before password files (no file beside it)', true],
    ['whose password was not changed yet when the file was written (a crash in between)', false],
  ])('is given to a cluster still on the well-known password, %s', async (_case, removeFile) => {
    // Given a cluster whose superuser has the password every cluster used to have
    const dir = await dataDir()
    const server = await start(dir)
    await query(server.url, "ALTER ROLE postgres PASSWORD 'postgres'")
    await stop(server)
    if (removeFile) await rm(passwordFileOf(dir))

    // When it is started again
    const alerts: string[] = []
    const again = await start(dir, (line) => alerts.push(line))

    // Then the well-known password no longer opens it, and the one in its file does
    const password = readFileSync(passwordFileOf(dir), 'utf8').trim()
    expect(password).not.toBe('postgres')
    expect(await connectAs(again.port, 'postgres')).toBe('28P01')
    expect(await connectAs(again.port, password)).toBe('connected')
    await query(again.url, 'SELECT 1')
    // And the operator's log says so, once
    expect(alerts).toEqual([
      `gave the embedded Postgres superuser its own password, kept in ${passwordFileOf(dir)}, in place of the one every cluster had`,
    ])
  })
})

/** The postmaster's pid, from the cluster's postmaster.pid. */
function postmasterPid(dir: string): number | undefined {
  const file = path.join(dir, 'postmaster.pid')
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined
}

/** Everything in the server's log directory, `<dataDir>/log`, oldest file first. */
function serverLog(dir: string): string {
  const logDir = path.join(dir, 'log')
  if (!existsSync(logDir)) return ''
  return readdirSync(logDir)
    .map((name) => path.join(logDir, name))
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
    .map((file) => readFileSync(file, 'utf8'))
    .join('')
}

describe("the embedded Postgres's log", () => {
  it("starts today's file afresh when it was last written before today (a week ago), and appends to one written today", async () => {
    const dir = await dataDir()
    await stop(await start(dir))
    const logDir = path.join(dir, 'log')
    const [name] = readdirSync(logDir)
    const file = path.join(logDir, name as string)
    await appendFile(file, 'written today\n')
    await stop(await start(dir))
    // A restart the same day keeps the day's lines
    expect(readFileSync(file, 'utf8')).toContain('written today')
    await appendFile(file, 'written a week ago\n')
    const weekAgo = new Date(Date.now() - 7 * 86_400_000 - 3_600_000)
    await utimes(file, weekAgo, weekAgo)
    await stop(await start(dir))
    // The server logged its start into a file of its own: last week's lines are gone (appended before)
    const text = readFileSync(file, 'utf8')
    expect(text).not.toContain('written a week ago')
    expect(text).toMatch(/database system is ready to accept connections/)
  })
})

describe("the embedded Postgres's log, flooded", () => {
  /** Repeats a failing statement on `url` until today's log file is set aside; the set-aside file's text. */
  async function floodUntilSetAside(url: string, today: string, marker: string): Promise<string> {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const fail = (name: string) => client.query(`SELECT ${name}`).catch(() => {})
      await fail(`${marker}_before_the_cap`)
      let tries = 0
      await waitFor(
        async () => {
          for (let i = 0; i < 20; i++, tries++) await fail(`${marker}_${tries}`)
          return existsSync(`${today}.1`)
        },
        { what: "today's log set aside", timeoutMs: 30_000 },
      )
      await waitFor(() => existsSync(today), { what: "today's file started afresh" })
      await fail(`${marker}_after_the_cap`)
      await waitFor(() => readFileSync(today, 'utf8').includes(`${marker}_after_the_cap`), {
        what: 'the later line in the new file',
      })
      return readFileSync(`${today}.1`, 'utf8')
    } finally {
      await client.end()
    }
  }

  // Regression (review5's item 5): a day's file had no size bound: a client repeating a failing statement
  // wrote a line pair per try into it for as long as it ran.
  it("sets today's file aside as .1 past its cap and starts it afresh, losing no line", async () => {
    // Given: a server whose log is capped at 32 KiB
    const dir = await dataDir()
    const server = await startEmbeddedPostgres({
      dataDir: dir,
      settings: { fsync: 'off' },
      logCapBytes: 32 * 1024,
    })
    running.push(server)
    const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][new Date().getDay()]
    const today = path.join(dir, 'log', `postgresql-${weekday}.log`)

    // When: a client repeats a failing statement
    const setAside = await floodUntilSetAside(server.url, today, 'no_such_column')

    // Then: the lines before the cap are in .1, the later ones in today's file, afresh
    expect(setAside).toContain('no_such_column_before_the_cap')
    expect(setAside).toContain('no_such_column_0"')
    expect(readFileSync(today, 'utf8')).not.toContain('no_such_column_before_the_cap')
    expect(statSync(today).size).toBeLessThan(32 * 1024)
    expect(existsSync(path.join(dir, 'logrotate'))).toBe(false)
  })

  // Regression (mend9, D4): the owner's restart loop started the server without the test's cap, so a
  // restarted server was capped at the default 64 MiB.
  it('keeps its cap once started again after it died', async () => {
    // Given: a server whose log is capped at 32 KiB, killed and started again by its owner
    const dir = await dataDir()
    const alerts: string[] = []
    const server = await startEmbeddedPostgres({
      dataDir: dir,
      settings: { fsync: 'off' },
      logCapBytes: 32 * 1024,
      alert: (line) => alerts.push(line),
      restartDelaysMs: [100],
    })
    running.push(server)
    const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][new Date().getDay()]
    const today = path.join(dir, 'log', `postgresql-${weekday}.log`)
    process.kill(postmasterPid(dir)!, 'SIGKILL')
    await waitFor(() => /is running again$/.test(alerts.at(-1) ?? ''), {
      what: 'the server started again',
      timeoutMs: 60_000,
    })

    // When: a client repeats a failing statement
    const setAside = await floodUntilSetAside(server.url, today, 'after_the_restart')

    // Then: today's file was set aside at the same cap
    expect(setAside).toContain('after_the_restart_before_the_cap')
    expect(statSync(today).size).toBeLessThan(32 * 1024)
  })
})

describe('the embedded Postgres stopping on its own', () => {
  it('is started again on the same port, saying so above the debug level, and stopped for good by stop()', async () => {
    // Given a running embedded server, its password known
    const dir = await dataDir()
    const alerts: string[] = []
    const server = await start(dir, (line) => alerts.push(line))
    const password = readFileSync(passwordFileOf(dir), 'utf8').trim()
    const first = postmasterPid(dir)!

    // When it is killed (the OOM killer, an operator's kill -9)
    process.kill(first, 'SIGKILL')

    // Then it is running again on the same port, another process, and the alerts said why
    await waitFor(async () => (await connectAs(server.port, password)) === 'connected', {
      what: 'the embedded Postgres to accept connections again',
      timeoutMs: 60_000,
    })
    const second = postmasterPid(dir)!
    expect(second).not.toBe(first)
    expect(alerts[0]).toMatch(/exited \(signal SIGKILL\); starting it again$/)
    // (said once this process sees it ready: postmaster.pid, looked at every 50 ms, may say so after a
    // connection was accepted)
    await waitFor(() => /is running again$/.test(alerts.at(-1) ?? ''), {
      what: 'the alert that it runs again',
    })

    // And stop() stops it for good: no server left behind, none started again
    await stop(server)
    expect(alive(second)).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(postmasterPid(dir)).toBeUndefined()
  })
})

describe('stopping during an outage', () => {
  // Regression (review3's item 6): stop() awaited the restart loop, which waited out its delay (1–5 s)
  // before it looked whether it was stopping: a shutdown during an outage waited for it.
  it('cuts the restart delay short: stop() returns without waiting for it, and starts nothing', async () => {
    // Given a server whose restarts wait an hour, killed: its restart loop is waiting
    const dir = await dataDir()
    const alerts: string[] = []
    const server = await start(dir, (line) => alerts.push(line), [3_600_000])
    const first = postmasterPid(dir)!
    process.kill(first, 'SIGKILL')
    await waitFor(() => alerts.some((a) => a.endsWith('starting it again')), { what: 'the restart loop' })

    // When it is stopped
    let stopped = false
    const stopping = stop(server).then(() => {
      stopped = true
    })

    // Then stop() returns (before, it waited the hour out), and no server was started again
    await waitFor(() => stopped, { what: 'stop() to return during the restart delay', timeoutMs: 30_000 })
    await stopping
    expect(alerts.some((a) => a.endsWith('is running again'))).toBe(false)
    expect(alive(first)).toBe(false)
    expect(existsSync(`${dir}.owner`)).toBe(false)
  })
})

/** Another process of ours that starts the embedded server on `dir` and runs until killed. */
async function startedElsewhere(dir: string): Promise<ChildProcessByStdio<null, Readable, null>> {
  const script = path.join(path.dirname(dir), 'owner.mts')
  await writeFile(
    script,
    `import { startEmbeddedPostgres } from ${JSON.stringify(path.resolve('libs/db/src/index.ts'))}
    await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dir)}, settings: { fsync: 'off' } })
    console.log('ready')
    setInterval(() => {}, 1000)\n`,
  )
  // Node itself: tsx's command would run it as a child of its own, and be the process killed.
  const owner = spawn(process.execPath, ['--import', 'tsx', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  leftovers.push(owner.pid!)
  await new Promise<void>((resolve, reject) => {
    owner.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve())
    owner.once('exit', (code) => reject(new Error(`the owner exited (${code})`)))
  })
  return owner
}

describe('an embedded Postgres left running by a process killed with SIGKILL', () => {
  it('is told apart from one its owner still runs, and stopped so that a new start owns its server', async () => {
    // Given another process that started the embedded server on a data directory
    const dir = await dataDir()
    const owner = await startedElsewhere(dir)
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)

    // While it runs, its server is not an orphan (another process of ours may use it)
    expect(orphanedEmbeddedPostgres(dir)).toBeUndefined()

    // When that process is killed with SIGKILL, its server goes on running, an orphan
    const exited = new Promise((resolve) => owner.once('exit', resolve))
    owner.kill('SIGKILL')
    await exited
    expect(alive(postmaster)).toBe(true)
    await waitFor(() => orphanedEmbeddedPostgres(dir) === postmaster, { what: 'the server to be an orphan' })

    // Then it can be stopped, and a new start runs a server of its own on the same cluster
    await stopOrphanedEmbeddedPostgres(postmaster)
    expect(alive(postmaster)).toBe(false)
    const server = await start(dir)
    expect(postmasterPid(dir)).not.toBe(postmaster)
    expect(orphanedEmbeddedPostgres(dir)).toBeUndefined()
    await query(server.url, 'SELECT 1')
  })
})

describe('a postmaster.pid left behind by a server that could not stop', () => {
  // Regression: after a power cut or a killed container, postmaster.pid names a pid the system may have
  // given to another process since; it was taken for the running server (a URL to nothing) and, its
  // parent not being the recorded owner, for an orphan to stop: that process was sent SIGINT.
  it('naming a live process that is no server of the cluster: neither used nor stopped', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cas-stale-pid-'))
    scratch.push(dir)
    const bystander = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
    leftovers.push(bystander.pid!)
    await waitFor(() => alive(bystander.pid!), { what: 'the bystander to run' })
    const port = 54_999
    await writeFile(
      path.join(dir, 'postmaster.pid'),
      `${bystander.pid}\n${dir}\n1764547200\n${port}\n/tmp\n127.0.0.1\n  1234567  7\nready   \n`,
    )
    // The process that started the server, gone since (a pid that is not the bystander's parent).
    await writeFile(`${dir}.owner`, `${process.pid + 100_000}\n`)
    scratch.push(`${dir}.owner`)

    expect(runningEmbeddedPostgres(dir)).toBeUndefined()
    expect(orphanedEmbeddedPostgres(dir)).toBeUndefined()
    expect(alive(bystander.pid!)).toBe(true)
  })
})

describe('the owner file', () => {
  // Regression (review3's item 2): postgres.owner was written once the server was ready and never removed,
  // so while a start (B) came up on a cluster whose file still named the previous owner (A, stopped
  // normally), any other process of ours saw B's postmaster, with a parent other than the "owner", as an
  // orphan, and sent it SIGINT.
  it('is removed when its server stops, and written before a start spawns one: a server coming up is never taken for an orphan', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cas-owner-'))
    scratch.push(dir, `${dir}.owner`, `${dir}.password`)
    // Given: a cluster whose server (A) ran and was stopped
    await stop(await start(dir))
    expect(existsSync(`${dir}.owner`)).toBe(false)
    // and an owner file left by a process that is gone (as one killed with SIGKILL leaves it)
    await writeFile(`${dir}.owner`, `${process.pid + 100_000}\n`)

    // When: another start (B) comes up, looked at every 2 ms while it does
    let postmasterSeen = 0
    const orphansSeen: number[] = []
    const look = setInterval(() => {
      if (postmasterPid(dir) === undefined) return
      postmasterSeen++
      const orphan = orphanedEmbeddedPostgres(dir)
      if (orphan !== undefined) orphansSeen.push(orphan)
    }, 2)
    let server: RunningPostgres
    try {
      server = await start(dir)
    } finally {
      clearInterval(look)
    }

    // Then: its postmaster was seen starting, never as an orphan; the file names B until it stops
    expect(postmasterSeen).toBeGreaterThan(0)
    expect(orphansSeen).toEqual([])
    expect(readFileSync(`${dir}.owner`, 'utf8').trim()).toBe(String(process.pid))
    await query(server.url, 'SELECT 1')
    await stop(server)
    expect(existsSync(`${dir}.owner`)).toBe(false)
  })
})

describe('two starts racing on one data directory', () => {
  // Regression (mend4's leftover): the loser of the race (a start that looked before the winner's
  // postmaster.pid was there) wrote the owner file naming itself while the winner's server ran: any other
  // process of ours took that server for an orphan and stopped it; and, failing, the loser removed the
  // file, so that the winner's server, its owner then killed, was never found orphaned.
  it('leave the owner file naming the winner only, and its server is never taken for an orphan meanwhile', async () => {
    // Given: another process of ours won the cluster and runs its server
    const dir = await dataDir()
    const winner = await startedElsewhere(dir)
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)
    expect(readFileSync(`${dir}.owner`, 'utf8').trim()).toBe(String(winner.pid))

    // When: a start that lost the race goes on (it writes the file, spawns, and Postgres refuses it),
    // looked at every 2 ms meanwhile
    const orphansSeen: number[] = []
    const look = setInterval(() => {
      const orphan = orphanedEmbeddedPostgres(dir)
      if (orphan !== undefined) orphansSeen.push(orphan)
    }, 2)
    let failure: unknown
    try {
      await start(dir).catch((err: unknown) => {
        failure = err
      })
    } finally {
      clearInterval(look)
    }

    // Then: it failed, the winner's server runs on, never seen as an orphan, and the file names the winner
    expect(String(failure)).toMatch(/stopped while starting/)
    expect(alive(postmaster)).toBe(true)
    expect(orphansSeen).toEqual([])
    expect(readFileSync(`${dir}.owner`, 'utf8').trim()).toBe(String(winner.pid))

    // And killed, the winner leaves its server to be found orphaned and stopped
    const exited = new Promise((resolve) => winner.once('exit', resolve))
    winner.kill('SIGKILL')
    await exited
    await waitFor(() => orphanedEmbeddedPostgres(dir) === postmaster, { what: 'the server to be an orphan' })
    await stopOrphanedEmbeddedPostgres(postmaster)
  })
})

describe('a leaving file left behind', () => {
  // Regression (review5's item 6): the leaving file named a pid only; left by a leaver killed mid-leave,
  // its pid given since to another live process, it made every process starting to use the server wait
  // out untilNoneLeaves' 60 s.
  it('whose pid another process has now is not waited for; a live leaver is named with its start time', async () => {
    // Given: a leaving file naming a live process with a start time it does not have
    const dir = await dataDir()
    const reused = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
    leftovers.push(reused.pid!)
    await waitFor(() => startTimeOf(reused.pid!) !== undefined, { what: 'the process to run' })
    await writeFile(`${dir}.leaving`, `${reused.pid} 1\n`)

    // When: a process waits for the leaver; then it goes on while that process still runs
    await untilNoneLeaves(dir)
    expect(alive(reused.pid!)).toBe(true)

    // And: a leaver's file names it with its start time, the one /proc gives
    let written = ''
    await whileLeaving(dir, async () => {
      written = readFileSync(`${dir}.leaving`, 'utf8')
    })
    expect(written).toBe(`${process.pid} ${startTimeOf(process.pid)}\n`)
    expect(startTimeOf(process.pid)).toMatch(/^\d+$/)
    expect(existsSync(`${dir}.leaving`)).toBe(false)
  })
})

describe('a start that loses the cluster to another process of ours starting it meanwhile', () => {
  // Regression (review5's item 7): npm start looked for a running server, found none, and started its own;
  // when another process of ours (a user's or heir's restart) spawned one in between, Postgres refused
  // npm start's and it exited 1 with that line, though a server it could use was running.
  it('uses the server that won, as a registered user, rather than fail', async () => {
    // Given: a start on a data directory, held after its look and before its spawn, while another
    // process of ours starts the server there
    const dir = await dataDir()
    let winner: ChildProcessByStdio<null, Readable, null> | undefined
    const { server, used } = await startOrUseEmbeddedPostgres({
      dataDir: dir,
      settings: { fsync: 'off' },
      holdSpawn: async () => {
        winner = await startedElsewhere(dir)
      },
    })
    running.push(server)
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)

    // Then: it uses the winner's server, registered as its user, and the owner file names the winner
    expect(used).toBe(true)
    await query(server.url, 'SELECT 1')
    expect(existsSync(path.join(`${dir}.users`, String(process.pid)))).toBe(true)
    expect(readFileSync(`${dir}.owner`, 'utf8').trim()).toBe(String(winner!.pid))

    // And: leaving, it unregisters and leaves the winner's server running for the winner
    await stop(server)
    expect(existsSync(path.join(`${dir}.users`, String(process.pid)))).toBe(false)
    expect(alive(postmaster)).toBe(true)
  })
})

/**
 * Another process of ours (a CLI) that starts the embedded server on `dir`, and stops it on `end()`;
 * with `handlesSigint`, on SIGINT too (as npm start does: its stop() hands it over to a user).
 */
async function cliThatStarted(
  dir: string,
  { handlesSigint = false } = {},
): Promise<{ end(): Promise<unknown>; interrupt(): Promise<unknown> }> {
  const script = path.join(path.dirname(dir), 'cli.mts')
  await writeFile(
    script,
    `import { startEmbeddedPostgres } from ${JSON.stringify(path.resolve('libs/db/src/index.ts'))}
    const server = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dir)}, settings: { fsync: 'off' } })
    ${handlesSigint ? "process.on('SIGINT', () => server.stop().then(() => process.exit(0)))" : ''}
    console.log('ready')
    process.stdin.once('data', async () => {
      await server.stop()
      process.stdin.destroy()
    })\n`,
  )
  // In a process group of its own, as a CLI run in a terminal is: Ctrl-C there signals the whole group.
  const cli = spawn(process.execPath, ['--import', 'tsx', script], {
    stdio: ['pipe', 'pipe', 'inherit'],
    detached: true,
  })
  leftovers.push(cli.pid!)
  await new Promise<void>((resolve, reject) => {
    cli.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve())
    cli.once('exit', (code) => reject(new Error(`the CLI exited (${code})`)))
  })
  return {
    end() {
      const exited = new Promise((resolve) => cli.once('exit', resolve))
      cli.stdin.write('stop\n')
      return exited
    },
    interrupt() {
      const exited = new Promise((resolve) => cli.once('exit', (code, signal) => resolve(signal ?? code)))
      process.kill(-cli.pid!, 'SIGINT')
      return exited
    },
  }
}

describe('an embedded Postgres another process of ours uses', () => {
  // Regression (review3's item 3): a CLI that started the server stopped it when it ended, while
  // `npm start`, started after it (it found the server running and used it), still needed it: 503 until
  // restarted, nobody restarting a server it did not own.
  it('is handed over, left running, when its owner leaves first, and stopped by the last user to leave', async () => {
    // Given: a CLI that started the server on a data directory, and this process using it
    const dir = await dataDir()
    const cli = await cliThatStarted(dir)
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)
    const used = (await useRunningEmbeddedPostgres(dir))!
    await query(used.url, 'SELECT 1')

    // When: the CLI ends (on its own: nothing of it holds the server any longer)
    expect(await cli.end()).toBe(0)

    // Then: the server runs on for this process, which owns it now, and logs where it did
    expect(alive(postmaster)).toBe(true)
    await expect(query(used.url, 'SELECT no_such_column_after_the_hand_over')).rejects.toThrow(
      /no_such_column/,
    )
    await query(used.url, 'SELECT 1')
    // (regression, mend5's leftover: its log was the CLI's stderr pipe, closed with it, and went nowhere)
    await waitFor(() => serverLog(dir).includes('ERROR:  column "no_such_column_after_the_hand_over"'), {
      what: "the failing statement in the server's log file",
    })
    expect(readFileSync(`${dir}.owner`, 'utf8').trim()).toBe(String(process.pid))
    expect(orphanedEmbeddedPostgres(dir)).toBeUndefined()

    // And: the last user to leave stops it
    await used.stop()
    expect(alive(postmaster)).toBe(false)
    expect(existsSync(`${dir}.owner`)).toBe(false)
    expect(runningEmbeddedPostgres(dir)).toBeUndefined()
  })

  // Regression (mend5's leftover): handed over, the server was no child of its new owner, and nothing
  // noticed it die: each user answered 503 until the next start on the data directory.
  it('is started again on the same port by the process it was handed over to, when it dies', async () => {
    // Given: a server handed over to this process by the CLI that started it
    const dir = await dataDir()
    const cli = await cliThatStarted(dir)
    const first = postmasterPid(dir)!
    leftovers.push(first)
    const alerts: string[] = []
    const used = (await useRunningEmbeddedPostgres(dir, { alert: (line) => alerts.push(line) }))!
    running.push(used)
    expect(await cli.end()).toBe(0)
    expect(readFileSync(`${dir}.owner`, 'utf8').trim()).toBe(String(process.pid))

    // When: it is killed (the OOM killer, an operator's kill -9)
    process.kill(first, 'SIGKILL')

    // Then: it answers again on the URL this process has, another postmaster, this process's child
    await waitFor(
      async () => {
        await query(used.url, 'SELECT 1')
        return true
      },
      { what: 'the embedded Postgres to answer again', timeoutMs: 30_000 },
    )
    const second = postmasterPid(dir)!
    expect(second).not.toBe(first)
    expect(readFileSync(`/proc/${second}/status`, 'utf8')).toMatch(
      new RegExp(`^PPid:\\s+${process.pid}$`, 'm'),
    )
    expect(alerts[0]).toMatch(/handed over to this process, exited; starting it again$/)
    // (said once this process sees it ready: postmaster.pid, looked at every 50 ms, may say so after a
    // connection was accepted)
    await waitFor(() => /is running again$/.test(alerts.at(-1) ?? ''), {
      what: 'the alert that it runs again',
    })

    // And: leaving, this process stops it
    await stop(used)
    expect(alive(second)).toBe(false)
    expect(existsSync(`${dir}.owner`)).toBe(false)
  })

  // Regression (review5's item 4): the postmaster was in its starter's process group, so Ctrl-C in npm
  // start's terminal reached it directly: npm start (which has a handler) announced the hand-over, the
  // server stopped all the same, and the process using it started a new one ~1 s later, its sessions lost.
  it("runs on under the sessions of the process using it when its owner's terminal is interrupted (Ctrl-C) and the owner hands it over", async () => {
    // Given: a process that started the server and hands it over on SIGINT (as npm start does), in a
    // terminal's process group, and this process using it, a session open
    const dir = await dataDir()
    const owner = await cliThatStarted(dir, { handlesSigint: true })
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)
    const alerts: string[] = []
    const used = (await useRunningEmbeddedPostgres(dir, { alert: (line) => alerts.push(line) }))!
    running.push(used)
    const session = new pg.Client({ connectionString: used.url })
    session.on('error', () => {})
    await session.connect()
    try {
      await session.query('CREATE TEMPORARY TABLE kept (n int)')

      // When: Ctrl-C in the owner's terminal (SIGINT to its process group)
      expect(await owner.interrupt()).toBe(0)

      // Then: the same server runs on, owned by this process, and the session (its temporary table) lives
      expect(alive(postmaster)).toBe(true)
      expect(postmasterPid(dir)).toBe(postmaster)
      expect(readFileSync(`${dir}.owner`, 'utf8').trim()).toBe(String(process.pid))
      await session.query('INSERT INTO kept VALUES (1)')
      expect((await session.query('SELECT count(*)::int AS n FROM kept')).rows[0].n).toBe(1)
      expect(alerts).toEqual([])
    } finally {
      await session.end().catch(() => {})
    }

    // And: leaving, this process stops it
    await stop(used)
    expect(alive(postmaster)).toBe(false)
    expect(existsSync(`${dir}.owner`)).toBe(false)
  })

  // Regression (review5): a process ended by a signal it does not handle (a CLI's Ctrl-C before its
  // handler, a kill -9) hands nothing over. Its server, in its process group, stopped on the same Ctrl-C;
  // in a group of its own since, it runs on, and must not run on for nobody once its users leave.
  it('is taken over, running on, by the process using it when its owner is ended by a signal it does not handle', async () => {
    // Given: a process that started the server, with no SIGINT handler, and this process using it
    const dir = await dataDir()
    const owner = await cliThatStarted(dir)
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)
    const alerts: string[] = []
    const used = (await useRunningEmbeddedPostgres(dir, { alert: (line) => alerts.push(line) }))!
    running.push(used)
    const session = new pg.Client({ connectionString: used.url })
    session.on('error', () => {})
    await session.connect()
    try {
      // When: Ctrl-C in the owner's terminal ends it
      expect(await owner.interrupt()).toBe('SIGINT')

      // Then: the server runs on, the session with it, and this process owns it
      await waitFor(() => readFileSync(`${dir}.owner`, 'utf8').trim() === String(process.pid), {
        what: 'this process to own the server',
      })
      expect(postmasterPid(dir)).toBe(postmaster)
      await session.query('SELECT 1')
      await waitFor(() => alerts.length > 0, { what: 'the alert' })
      expect(alerts).toEqual([
        expect.stringMatching(/its owner \(process \d+\) gone, runs on; owned by this process now$/),
      ])
      expect(orphanedEmbeddedPostgres(dir)).toBeUndefined()
    } finally {
      await session.end().catch(() => {})
    }

    // And: leaving, this process stops it: nothing runs on for nobody
    await stop(used)
    expect(alive(postmaster)).toBe(false)
    expect(existsSync(`${dir}.owner`)).toBe(false)
  })

  it('is stopped by its owner when the processes that used it have left', async () => {
    // Given: a server this process started, used by another process of ours that has left since
    const dir = await dataDir()
    const server = await start(dir)
    const postmaster = postmasterPid(dir)!
    const script = path.join(path.dirname(dir), 'user.mts')
    await writeFile(
      script,
      `import { useRunningEmbeddedPostgres } from ${JSON.stringify(path.resolve('libs/db/src/index.ts'))}
      const used = await useRunningEmbeddedPostgres(${JSON.stringify(dir)})
      await used.stop()\n`,
    )
    const user = spawn(process.execPath, ['--import', 'tsx', script], { stdio: 'inherit' })
    expect(await new Promise((resolve) => user.once('exit', resolve))).toBe(0)

    // When: the owner stops; then the server stops with it
    await stop(server)
    expect(alive(postmaster)).toBe(false)
    expect(existsSync(`${dir}.owner`)).toBe(false)
  })
})

describe('a process that starts using the server while its owner stops it', () => {
  // Regression (review4's item 3): useRunningEmbeddedPostgres registers, then reads postmaster.pid; an
  // owner in stop() that had looked for users before that registration stopped the server all the same,
  // and the new user was left with a URL to a server that was gone (503 until restarted).
  it('gets no URL (it starts its own), or a server that was not stopped', async () => {
    // Given: this process owns the server, and its stop() is held after it looked for users
    const dir = await dataDir()
    const { holdStop, hasLooked, release } = heldStop()
    const server = await startEmbeddedPostgres({ dataDir: dir, settings: { fsync: 'off' }, holdStop })
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)
    const stopping = server.stop()
    await hasLooked

    // When: another process of ours starts using it then, and the stop goes on once it has registered
    const script = path.join(path.dirname(dir), 'late-user.mts')
    await writeFile(
      script,
      `import { useRunningEmbeddedPostgres } from ${JSON.stringify(path.resolve('libs/db/src/index.ts'))}
      const used = await useRunningEmbeddedPostgres(${JSON.stringify(dir)})
      console.log(JSON.stringify({ url: used?.url ?? null }))
      await used?.stop()\n`,
    )
    const user = spawn(process.execPath, ['--import', 'tsx', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    leftovers.push(user.pid!)
    let output = ''
    user.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    const exited = new Promise((resolve) => user.once('exit', resolve))
    await waitFor(() => existsSync(path.join(`${dir}.users`, String(user.pid))), {
      what: 'the late user to register',
    })
    release()
    await stopping
    expect(await exited).toBe(0)

    // Then: either it got no URL, or the server it got runs and answers
    const { url } = JSON.parse(output) as { url: string | null }
    if (url !== null) {
      expect(alive(postmaster)).toBe(true)
      await query(url, 'SELECT 1')
    }
    // And here (its owner looked before it registered) it got none, and the server was stopped
    expect(url).toBeNull()
    expect(alive(postmaster)).toBe(false)
  })
})

describe('a user that leaves while its owner hands the server over to it', () => {
  // Regression (mend5's leftover): the user, leaving, found the owner file not naming it yet and left;
  // the owner then wrote its pid there: a server owned by a process that is gone, running on unused until
  // the next start on the data directory found it orphaned.
  it('stops the server once the hand-over is done, leaving no owner file behind', async () => {
    // Given: this process owns the server, another process of ours uses it, and this one's stop() is held
    // after it looked for users (it saw that one, its heir)
    const dir = await dataDir()
    const { holdStop, hasLooked, release } = heldStop()
    const server = await startEmbeddedPostgres({ dataDir: dir, settings: { fsync: 'off' }, holdStop })
    const postmaster = postmasterPid(dir)!
    leftovers.push(postmaster)
    const script = path.join(path.dirname(dir), 'heir.mts')
    await writeFile(
      script,
      `import { useRunningEmbeddedPostgres } from ${JSON.stringify(path.resolve('libs/db/src/index.ts'))}
      const used = await useRunningEmbeddedPostgres(${JSON.stringify(dir)})
      console.log('ready')
      process.stdin.once('data', async () => {
        await used.stop()
        process.stdin.destroy()
      })\n`,
    )
    const heir = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] })
    leftovers.push(heir.pid!)
    await new Promise<void>((resolve, reject) => {
      heir.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve())
      heir.once('exit', (code) => reject(new Error(`the heir exited (${code})`)))
    })
    const stopping = server.stop()
    await hasLooked

    // When: the heir leaves then (it has unregistered), and the hand-over goes on
    const exited = new Promise((resolve) => heir.once('exit', resolve))
    heir.stdin.write('stop\n')
    await waitFor(() => !existsSync(path.join(`${dir}.users`, String(heir.pid))), {
      what: 'the heir to unregister',
    })
    release()
    await stopping
    expect(await exited).toBe(0)

    // Then: the heir, last to leave, stopped the server; no owner file names a process that is gone
    expect(alive(postmaster)).toBe(false)
    expect(existsSync(`${dir}.owner`)).toBe(false)
    expect(orphanedEmbeddedPostgres(dir)).toBeUndefined()
  })
})
