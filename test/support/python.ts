import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'

/** How a command ended: its exit code, its stdout, and its stdout and stderr together as they came. */
export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly output: string
}

/**
 * Runs a command to its end, stdin closed, killed (SIGKILL) after `timeoutMs`. `env` is the child's whole
 * environment (process.env when not given).
 */
export function run(
  command: string,
  args: readonly string[],
  opts: { timeoutMs: number; cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const out: Buffer[] = []
    const all: Buffer[] = []
    child.stdout.on('data', (c: Buffer) => {
      out.push(c)
      all.push(c)
    })
    child.stderr.on('data', (c: Buffer) => all.push(c))
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        output: Buffer.concat(all).toString('utf8'),
      })
    })
  })
}

/**
 * A Python virtual environment at `dir` (python3 -m venv) holding what `pip install <install…>` installs,
 * made again from scratch when `version` (what the install is made from) changed since it was made: a
 * file `installed` in it keeps its hash. Returns the environment's python.
 */
export async function ensureVenv(
  dir: string,
  install: readonly string[],
  version: string | Buffer,
): Promise<string> {
  const python = path.join(dir, 'bin', 'python')
  const marker = path.join(dir, 'installed')
  const wanted = createHash('sha256').update(version).digest('hex')
  if (existsSync(python) && existsSync(marker) && readFileSync(marker, 'utf8').trim() === wanted)
    return python
  rmSync(dir, { recursive: true, force: true })
  const system = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'
  const venv = await run(system, ['-m', 'venv', dir], { timeoutMs: 120_000 })
  if (venv.code !== 0)
    throw new Error(`python3 -m venv failed (install python3-venv):\n${venv.output.slice(-2000)}`)
  const pip = await run(
    path.join(dir, 'bin', 'pip'),
    ['install', '--quiet', '--disable-pip-version-check', ...install],
    { timeoutMs: 600_000 },
  )
  if (pip.code !== 0) throw new Error(`pip install failed:\n${pip.output.slice(-3000)}`)
  writeFileSync(marker, `${wanted}\n`)
  return python
}
