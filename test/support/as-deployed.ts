/**
 * Running the service the way people deploy it, for the tests of the start command and of the container
 * image: copies of this checkout (hard links where the file system allows: instant and free), the
 * service as a child process under a given user, and the system users involved.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { link, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { waitFor } from './wait.ts'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

export const isRoot = process.getuid?.() === 0

/** `cp -al` (hard links), or `cp -a` where the two directories are on different file systems. */
export function linkOrCopy(from: string, to: string): void {
  try {
    execFileSync('cp', ['-al', from, to], { stdio: 'pipe' })
  } catch {
    execFileSync('rm', ['-rf', to])
    execFileSync('cp', ['-a', from, to], { stdio: 'pipe' })
  }
}

/**
 * This checkout's files as they are in the work tree (tracked and new, not ignored) and its node_modules,
 * at `dir`: what `git clone` and `npm ci` leave, without the network.
 */
export async function copyCheckout(dir: string): Promise<void> {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f && existsSync(path.join(ROOT, f)))
  for (const file of files) {
    const to = path.join(dir, file)
    await mkdir(path.dirname(to), { recursive: true })
    await link(path.join(ROOT, file), to).catch(() => execFileSync('cp', ['-a', path.join(ROOT, file), to]))
  }
  linkOrCopy(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'))
}

/**
 * The environment of a fresh shell: none of the servers this test run was pointed at, nor vitest's own
 * variables (NODE_ENV=test would make the dashboard's build a development one).
 */
export function freshEnvironment(env: Record<string, string>): Record<string, string> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'TEST'),
  ) as Record<string, string>
  for (const name of [
    'NODE_ENV',
    'DATABASE_URL',
    'QUERY_DATABASE_URL',
    'KAFKA_BROKERS',
    'REDIS_URL',
    'DATA_DIR',
    'ENCRYPTION_MASTER_KEY',
    'PORT',
    'HOST',
    'NODE_OPTIONS',
  ]) {
    delete inherited[name]
  }
  return { ...inherited, LOG_LEVEL: 'warn', ...env }
}

export interface Command {
  readonly process: ChildProcess
  /** Everything written to stdout and stderr so far. */
  stdout(): string
  stderr(): string
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

export function runCommand(
  command: string,
  args: readonly string[],
  opts: { cwd: string; env: Record<string, string>; user?: SystemUser },
): Command {
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(opts.user ? { uid: opts.user.uid, gid: opts.user.gid } : {}),
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code, signal) => resolve({ code, signal }))
  })
  exited.catch(() => {})
  return { process: child, stdout: () => stdout, stderr: () => stderr, exited }
}

/** Resolves once `baseUrl` answers /healthz; fails at once, with its output, if the command exits first. */
export async function waitUntilHealthy(command: Command, baseUrl: string): Promise<void> {
  let exited = false
  const exitedFirst = command.exited.then(({ code }) => {
    exited = true
    throw new Error(`the service exited (${code}) before answering /healthz:\n${command.stderr()}`)
  })
  exitedFirst.catch(() => {})
  const healthy = waitFor(
    // Stops polling once the process is gone: the race below has failed by then.
    async () => exited || (await fetch(`${baseUrl}/healthz`).catch(() => undefined))?.ok,
    { timeoutMs: 120_000, intervalMs: 100, what: `${baseUrl}/healthz` },
  )
  healthy.catch(() => {})
  await Promise.race([healthy, exitedFirst])
}

/** The lines a command wrote to stderr, npm's own warnings aside. */
export function stderrLines(command: Command): string[] {
  return command
    .stderr()
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('npm warn'))
}

export interface SystemUser {
  readonly name: string
  readonly uid: number
  readonly gid: number
}

/** The system user `name`, or undefined. */
export function systemUser(name: string): SystemUser | undefined {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' })
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' })
  if (uid.status !== 0 || gid.status !== 0) return undefined
  return { name, uid: Number(uid.stdout), gid: Number(gid.stdout) }
}

/**
 * An unprivileged system user (no home, no login shell) for the test to run things as, created the first
 * time (Debian's useradd, in every Debian system). Left in place: test runs may share it.
 */
export function unprivilegedUser(name: string): SystemUser {
  const existing = systemUser(name)
  if (existing) return existing
  spawnSync(
    'useradd',
    ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', name],
    {
      stdio: 'ignore',
    },
  )
  // Another test run may have created it meanwhile: either way it is there now, or this is the error.
  const created = systemUser(name)
  if (!created) throw new Error(`could not create the user ${name} (useradd)`)
  return created
}

/** Whether `user` may write in `dir`. */
export function canWrite(user: SystemUser, dir: string): boolean {
  return spawnSync('test', ['-w', dir], { uid: user.uid, gid: user.gid, stdio: 'ignore' }).status === 0
}

/** The pid of the Postgres server running on the cluster in `dataDir`, from its postmaster.pid. */
export function postmasterPid(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'postmaster.pid')
  if (!existsSync(file)) return undefined
  const pid = Number(readFileSync(file, 'utf8').split('\n', 1)[0])
  return Number.isInteger(pid) && pid > 0 ? pid : undefined
}

/** The real uid of process `pid` (Linux /proc), or undefined once it is gone. */
export function uidOf(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1])
  } catch {
    return undefined
  }
}
