/**
 * The README's start command as root (a container's default user) from a checkout inside a private
 * directory (mode 700, as /root is), as `git clone … && npm ci && npm start` leaves it. Postgres refuses
 * to run as root, so the embedded server runs as the system user postgres, which cannot enter that
 * directory: not the checkout's binaries, nor the default data directory inside it.
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { freePort } from '@cas/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
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
  it('Regression (issue 16): died with an unhandled spawn EACCES and a stack trace; with the default DATA_DIR it stops with one line saying why and what to do', async () => {
    const start = runCommand('npm', ['start'], {
      cwd: checkout,
      env: freshEnvironment({ PORT: String(await freePort()) }),
    })
    const { code } = await start.exited
    const lines = stderrLines(start)
    expect(code, start.stderr()).toBe(1)
    expect(lines, start.stderr()).toHaveLength(1)
    expect(lines[0]).toMatch(/^Cannot start the embedded Postgres in /)
    expect(lines[0]).toContain(`cannot enter ${privateDir} (mode 700`)
    expect(lines[0]).toContain('Set DATA_DIR to a directory that user can reach')
    expect(`${start.stdout()}${start.stderr()}`).not.toMatch(/^\s+at |Unhandled|EACCES/m)
    // Nothing was started or left behind in the data directory.
    expect(existsSync(path.join(checkout, '.data', 'postgres'))).toBe(false)
  }, 240_000)

  it('serves with DATA_DIR where the postgres user can reach it, running the binaries copied out of the private directory', async () => {
    if (!existsSync(path.join(checkout, 'dist', 'all-in-one.js'))) {
      expect(
        (await runCommand('npm', ['run', 'build'], { cwd: checkout, env: freshEnvironment({}) }).exited).code,
      ).toBe(0)
    }
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
    const pid = postmasterPid(path.join(dataDir, 'postgres'))
    if (pid) await waitFor(() => uidOf(pid) === undefined, { what: 'the embedded Postgres to stop' })
  }, 240_000)
})
