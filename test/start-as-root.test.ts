/**
 * The README's start command as root (a container's default user) from a checkout inside a private
 * directory (mode 700, as /root is), as `git clone … && npm ci && npm start` leaves it. Postgres refuses
 * to run as root, so the embedded server runs as the system user postgres, which cannot enter that
 * directory: not the checkout's binaries, nor the default data directory inside it. With DATA_DIR unset
 * the data then lives under DATA_DIR_FALLBACK (/var/lib/conversation-analytics; here a directory of the
 * test's own, removed afterwards); an explicit DATA_DIR is obeyed or refused.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { freePort } from '@cas/db'
import { fallbackName } from '@cas/platform'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type Command,
  copyCheckout,
  freshEnvironment,
  isRoot,
  postmasterPid,
  ROOT,
  runCommand,
  stderrLines,
  systemUser,
  uidOf,
  waitUntilHealthy,
} from './support/as-deployed.ts'
import { waitFor } from './support/wait.ts'

if (!isRoot) {
  if (process.env.CI === 'true') throw new Error('CI runs as root: the start-as-root tests must run there')
  console.warn('\n!! not root: the tests of `npm start` as root are SKIPPED\n')
}

let privateDir: string
let checkout: string
const scratch: string[] = []

beforeAll(async () => {
  if (!isRoot) return
  // Under the repository (.cache/, ignored), so that node_modules hard-links rather than copies.
  await mkdir(path.join(ROOT, '.cache'), { recursive: true })
  privateDir = await mkdtemp(path.join(ROOT, '.cache', 'private-home-'))
  await chmod(privateDir, 0o700)
  checkout = path.join(privateDir, 'conversation-analytics')
  await copyCheckout(checkout)
})
afterAll(async () => {
  for (const dir of [privateDir, ...scratch]) if (dir) await rm(dir, { recursive: true, force: true })
})

describe.runIf(isRoot)('npm start as root from a checkout in a mode-700 directory', () => {
  it('Issue 30: with DATA_DIR unset, answers /healthz within 60 s of `npm start`, its data in one place under DATA_DIR_FALLBACK that it says in one line, stops on a SIGTERM to npm, and a restart finds it there', async () => {
    const volume = await mkdtemp(path.join(os.tmpdir(), 'cas-root-fallback-'))
    scratch.push(volume)
    await chmod(volume, 0o755)
    const base = path.join(volume, 'var', 'lib', 'conversation-analytics')
    const env = (port: number) =>
      freshEnvironment({ DATA_DIR_FALLBACK: base, PORT: String(port), HOST: '127.0.0.1' })
    const notices = (command: Command) =>
      command
        .stdout()
        .split('\n')
        .filter((line) => line.includes('DATA_DIR is unset'))
        .map((line) => JSON.parse(line) as { level: number; msg: string; dataDir: string })

    let port = await freePort()
    const startedAt = Date.now()
    const start = runCommand('npm', ['start'], { cwd: checkout, env: env(port) })
    // `<checkout name>-<hash of its path>`: the same on every start from this checkout.
    const dataDir = path.join(base, fallbackName(path.join(checkout, '.data')))
    let masterKey = ''
    try {
      await waitUntilHealthy(start, `http://127.0.0.1:${port}`)
      const seconds = (Date.now() - startedAt) / 1000
      expect(seconds, `/healthz answered ${seconds} s after npm start`).toBeLessThan(60)
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)

      const [notice, ...more] = notices(start)
      expect(more, start.stdout()).toHaveLength(0)
      expect(notice!.dataDir).toBe(dataDir)
      expect(path.basename(dataDir)).toMatch(/^conversation-analytics-[0-9a-f]{8}$/)
      expect(notice!.msg).toContain(`the default ${path.join(checkout, '.data')} is out of the reach`)
      expect(notice!.msg).toContain(`cannot enter ${privateDir} (mode 700`)
      expect(notice!.msg).toContain(`lives in ${dataDir}`)
      expect(notice!.msg).toContain('set DATA_DIR to choose another directory')
      expect(stderrLines(start), start.stderr()).toEqual([])

      // All of DATA_DIR moved: the cluster (the postgres user's), the binaries it runs, the master key.
      for (const dir of [path.join(volume, 'var'), base, dataDir])
        expect(statSync(dir).mode & 0o777).toBe(0o711)
      const postgres = systemUser('postgres')!
      const cluster = path.join(dataDir, 'postgres')
      expect(statSync(cluster).uid).toBe(postgres.uid)
      expect(statSync(cluster).mode & 0o777).toBe(0o700)
      const pid = postmasterPid(cluster)!
      expect(uidOf(pid)).toBe(postgres.uid)
      expect(await readFile(`/proc/${pid}/cmdline`, 'utf8')).toContain(
        path.join(dataDir, 'postgres-binaries'),
      )
      expect(statSync(path.join(dataDir, 'master.key')).mode & 0o777).toBe(0o600)
      masterKey = await readFile(path.join(dataDir, 'master.key'), 'utf8')
      expect(existsSync(path.join(checkout, '.data'))).toBe(false)
      expect(statSync(privateDir).mode & 0o777).toBe(0o700)
    } finally {
      // SIGTERM to npm alone, as `kill <pid>` or a process manager sends it, stops the service: npm passes
      // it on to its script, which execs the service (trial6: the shell of `npm run build && node …` did
      // not pass it on, and the service and its Postgres ran on after npm had exited).
      start.process.kill('SIGTERM')
    }
    const cluster = path.join(dataDir, 'postgres')
    try {
      await stopped(cluster)
    } finally {
      // Only when the service ran on (the assertion above failed): the embedded Postgres's parent.
      const postmaster = postmasterPid(cluster)
      const service = postmaster && uidOf(postmaster) !== undefined && parentOf(postmaster)
      if (service) process.kill(service, 'SIGTERM')
    }
    expect((await start.exited).code, start.stderr()).toBe(0)

    // Restarted (what `npm start` runs once it has built), it finds the same directory, key and cluster.
    port = await freePort()
    const again = runCommand(process.execPath, ['--enable-source-maps', 'dist/all-in-one.js'], {
      cwd: checkout,
      env: env(port),
    })
    try {
      await waitUntilHealthy(again, `http://127.0.0.1:${port}`)
      expect(notices(again).map((n) => n.dataDir)).toEqual([dataDir])
      expect(await readFile(path.join(dataDir, 'master.key'), 'utf8')).toBe(masterKey)
      expect(readdirSync(base)).toEqual([path.basename(dataDir)])
      expect(existsSync(path.join(checkout, '.data'))).toBe(false)
    } finally {
      again.process.kill('SIGTERM')
    }
    expect((await again.exited).code, again.stderr()).toBe(0)
    await stopped(path.join(dataDir, 'postgres'))
  }, 240_000)

  it('Regression (issue 16): an explicit DATA_DIR the postgres user cannot reach is refused with one line saying why and what to do, no stack trace, nothing started', async () => {
    await built()
    const service = runCommand(process.execPath, ['--enable-source-maps', 'dist/all-in-one.js'], {
      cwd: checkout,
      env: freshEnvironment({ DATA_DIR: '.data', PORT: String(await freePort()) }),
    })
    const { code } = await service.exited
    const lines = stderrLines(service)
    expect(code, service.stderr()).toBe(1)
    expect(lines, service.stderr()).toHaveLength(1)
    expect(lines[0]).toMatch(/^Cannot start the embedded Postgres in /)
    expect(lines[0]).toContain(`cannot enter ${privateDir} (mode 700`)
    expect(lines[0]).toContain('Set DATA_DIR to a directory that user can reach')
    expect(`${service.stdout()}${service.stderr()}`).not.toMatch(/^\s+at |Unhandled|EACCES/m)
    expect(service.stdout()).not.toContain('DATA_DIR is unset')
    // Nothing was started or left behind in the data directory.
    expect(existsSync(path.join(checkout, '.data', 'postgres'))).toBe(false)
  }, 240_000)

  it('serves with DATA_DIR where the postgres user can reach it, running the binaries copied out of the private directory', async () => {
    await built()
    const volume = await mkdtemp(path.join(os.tmpdir(), 'cas-root-data-'))
    scratch.push(volume)
    await chmod(volume, 0o755)
    const dataDir = path.join(volume, 'data')
    const port = await freePort()
    // What `npm start` runs once it has built.
    const service = runCommand(process.execPath, ['--enable-source-maps', 'dist/all-in-one.js'], {
      cwd: checkout,
      env: freshEnvironment({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' }),
    })
    try {
      await waitUntilHealthy(service, `http://127.0.0.1:${port}`)
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
      const postgres = systemUser('postgres')!
      const cluster = path.join(dataDir, 'postgres')
      expect(statSync(cluster).uid).toBe(postgres.uid)
      const pid = postmasterPid(cluster)!
      expect(uidOf(pid)).toBe(postgres.uid)
      const versions = readdirSync(path.join(dataDir, 'postgres-binaries'))
      expect(versions).toHaveLength(1)
      const copied = path.join(dataDir, 'postgres-binaries', versions[0]!, 'bin', 'postgres')
      expect(await readFile(`/proc/${pid}/cmdline`, 'utf8')).toContain(copied)
    } finally {
      service.process.kill('SIGTERM')
    }
    expect((await service.exited).code, service.stderr()).toBe(0)
    await stopped(path.join(dataDir, 'postgres'))
  }, 240_000)
})

/** The checkout built (`npm start` builds first; a test that runs dist/ directly builds if need be). */
async function built(): Promise<void> {
  if (existsSync(path.join(checkout, 'dist', 'all-in-one.js'))) return
  const build = runCommand('npm', ['run', 'build'], { cwd: checkout, env: freshEnvironment({}) })
  expect((await build.exited).code, build.stderr()).toBe(0)
}

/** The parent of process `pid` (Linux /proc), or undefined once it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    return Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) || undefined
  } catch {
    return undefined
  }
}

/** Resolves once the embedded Postgres on `cluster` (if one ran) is gone. */
async function stopped(cluster: string): Promise<void> {
  const pid = postmasterPid(cluster)
  if (pid) await waitFor(() => uidOf(pid) === undefined, { what: 'the embedded Postgres to stop' })
}
