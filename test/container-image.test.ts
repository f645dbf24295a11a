/**
 * The container image's default command, tested without a Docker engine. The Dockerfile's final stage is
 * read for its working directory, environment, volumes, user, command and what it copies from the build
 * stage; the build stage's work is done in a copy of this checkout (`npm run build`, `npm prune
 * --omit=dev`); the application directory is assembled as the final stage's COPY lines do, owned by root
 * and read-only to the service; the command runs as an unprivileged user of the test's own (the image's
 * `node`), with DATA_DIR on a fresh directory owned by that user, as a new named volume is.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import { chmod, chown, copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { freePort } from '@cas/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  canWrite,
  copyCheckout,
  freshEnvironment,
  isRoot,
  linkOrCopy,
  postmasterPid,
  ROOT,
  runCommand,
  type SystemUser,
  stderrLines,
  uidOf,
  unprivilegedUser,
  waitUntilHealthy,
} from './support/as-deployed.ts'

if (!isRoot) {
  if (process.env.CI === 'true') throw new Error('CI runs as root: the container image test must run there')
  console.warn('\n!! not root (no other user to run as): the container image test is SKIPPED\n')
}

interface FinalStage {
  readonly workdir: string
  readonly env: Record<string, string>
  readonly volumes: string[]
  readonly user: string
  readonly cmd: string[]
  /** COPY --from=<stage> sources (absolute, in the build stage) and destinations (in the workdir). */
  readonly copies: { from: string; to: string }[]
}

/** The instructions of the Dockerfile's last stage that decide how its command runs. */
function finalStage(dockerfile: string): FinalStage {
  const lines = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
  const stage = lines.slice(lines.findLastIndex((l) => /^FROM\s/i.test(l)) + 1)
  const args = (instruction: string) =>
    stage
      .filter((l) => l.toUpperCase().startsWith(`${instruction} `))
      .map((l) => l.slice(instruction.length).trim())
  const env: Record<string, string> = {}
  for (const line of args('ENV')) {
    for (const [, name, value] of line.matchAll(/(\w+)=("[^"]*"|\S*)/g))
      env[name!] = value!.replace(/^"|"$/g, '')
  }
  return {
    workdir: args('WORKDIR').at(-1) ?? '/',
    env,
    volumes: args('VOLUME').flatMap((v) =>
      v.startsWith('[') ? (JSON.parse(v) as string[]) : v.split(/\s+/),
    ),
    user: args('USER').at(-1) ?? 'root',
    cmd: JSON.parse(args('CMD').at(-1) ?? '[]') as string[],
    copies: args('COPY')
      .filter((c) => c.startsWith('--from='))
      .map((c) => {
        const [, from, to] = c.split(/\s+/)
        return { from: from!, to: to! }
      }),
  }
}

const image = finalStage(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))
let scratch: string
let app: string
let user: SystemUser

beforeAll(async () => {
  if (!isRoot) return
  user = unprivilegedUser('cas-image-test')
  scratch = await mkdtemp(path.join(os.tmpdir(), 'cas-image-'))
  await chmod(scratch, 0o755)
  // The build stage, at its WORKDIR (/app): the checkout, npm ci (hard links to ours), build, prune.
  const build = path.join(scratch, 'build')
  await copyCheckout(build)
  // npm prune may rewrite these in place: they must not be links to this checkout's own files.
  const manifests = execFileSync('git', ['ls-files', '*package.json', 'package-lock.json'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  for (const file of [...manifests.split('\n').filter(Boolean), 'node_modules/.package-lock.json']) {
    await rm(path.join(build, file))
    await copyFile(path.join(ROOT, file), path.join(build, file))
  }
  for (const [command, ...args] of [
    [process.execPath, 'infra/build.mjs'],
    ['npm', 'prune', '--omit=dev', '--no-audit', '--no-fund', '--offline'],
  ] as const) {
    const step = runCommand(command, args, { cwd: build, env: freshEnvironment({}) })
    expect((await step.exited).code, `${command} ${args.join(' ')}: ${step.stderr()}`).toBe(0)
  }
  // The final stage: its WORKDIR, root's, with what its COPY lines take from the build stage.
  const home = path.join(scratch, 'home')
  await mkdir(home)
  await chown(home, user.uid, user.gid)
  app = path.join(scratch, 'app')
  await mkdir(app, { mode: 0o755 })
  for (const { from, to } of image.copies) {
    linkOrCopy(path.join(build, path.relative('/app', from)), path.join(app, to))
  }
}, 300_000)
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

/** The image's command (`node` being this Node), run as `user` in the application directory. */
function runImageCommand(env: Record<string, string>) {
  const [command, ...args] = image.cmd
  return runCommand(command === 'node' ? process.execPath : command!, args, {
    cwd: app,
    env: freshEnvironment({ ...image.env, HOME: path.join(scratch, 'home'), ...env }),
    user,
  })
}

describe.runIf(isRoot)('the container image', () => {
  it('Regression (issue 16): its command is untested; as its unprivileged user, from a read-only app directory, with DATA_DIR on a volume, it answers /healthz', async () => {
    expect(image.user).not.toMatch(/^(root|0)$/)
    expect(image.env.DATA_DIR, 'the Dockerfile sets DATA_DIR').toBeDefined()
    expect(image.volumes, 'DATA_DIR is a volume').toContain(image.env.DATA_DIR)
    expect(image.workdir).toBe('/app')
    expect(canWrite(user, app)).toBe(false)
    expect(canWrite(user, path.join(app, 'dist'))).toBe(false)
    // A new named volume: a directory of the user's own.
    const volume = path.join(scratch, 'volume')
    await mkdir(volume)
    await chown(volume, user.uid, user.gid)

    const port = await freePort()
    // HOST: loopback here, rather than the image's 0.0.0.0.
    const service = runImageCommand({ DATA_DIR: volume, PORT: String(port), HOST: '127.0.0.1' })
    try {
      await waitUntilHealthy(service, `http://127.0.0.1:${port}`)
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
      const cluster = path.join(volume, 'postgres')
      expect(statSync(cluster).uid).toBe(user.uid)
      expect(uidOf(postmasterPid(cluster)!)).toBe(user.uid)
    } finally {
      service.process.kill('SIGTERM')
    }
    expect((await service.exited).code, service.stderr()).toBe(0)
  }, 240_000)

  it('stops with one line, not a stack trace, when DATA_DIR is not writable (run without its volume)', async () => {
    const service = runImageCommand({ DATA_DIR: '.data', PORT: String(await freePort()) })
    expect((await service.exited).code).toBe(1)
    const lines = stderrLines(service)
    expect(lines, service.stderr()).toHaveLength(1)
    expect(lines[0]).toBe(
      `Cannot create the embedded Postgres's directory ${path.join(app, '.data')} (EACCES): set DATA_DIR to a directory this user (uid ${user.uid}) can write to, or set DATABASE_URL.`,
    )
  }, 120_000)
})
