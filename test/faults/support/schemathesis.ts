/**
 * Schemathesis (https://schemathesis.io, from PyPI) in a virtual environment under .cache/, installed on
 * first use and reused after. Needs python3 with venv (Debian: python3-venv).
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const SCHEMATHESIS_VERSION = '4.32.5'

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const VENV = path.join(REPO_ROOT, '.cache', 'schemathesis-venv')
const MARKER = path.join(VENV, 'installed-version')

export interface RunResult {
  readonly code: number | null
  readonly output: string
}

/** Runs a command (in `cwd`: Schemathesis keeps a .schemathesis/ cache where it runs) and collects its output. */
export function run(command: string, args: string[], timeoutMs: number, cwd?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    })
    const chunks: Buffer[] = []
    child.stdout.on('data', (c: Buffer) => chunks.push(c))
    child.stderr.on('data', (c: Buffer) => chunks.push(c))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, output: Buffer.concat(chunks).toString('utf8') })
    })
  })
}

/** The Python to build the environment with: the distribution's own when there is one. */
function python(): string {
  return fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'
}

/** The schemathesis executable, installing the pinned version first if needed. */
export async function ensureSchemathesis(): Promise<string> {
  const bin = path.join(VENV, 'bin', 'schemathesis')
  const installed = fs.existsSync(MARKER) ? fs.readFileSync(MARKER, 'utf8').trim() : undefined
  if (fs.existsSync(bin) && installed === SCHEMATHESIS_VERSION) return bin
  fs.rmSync(VENV, { recursive: true, force: true })
  const venv = await run(python(), ['-m', 'venv', VENV], 120_000)
  if (venv.code !== 0) {
    throw new Error(`python3 -m venv failed (install python3-venv):\n${venv.output.slice(-2000)}`)
  }
  const pip = await run(
    path.join(VENV, 'bin', 'pip'),
    ['install', '--quiet', '--disable-pip-version-check', `schemathesis==${SCHEMATHESIS_VERSION}`],
    300_000,
  )
  if (pip.code !== 0) throw new Error(`pip install schemathesis failed:\n${pip.output.slice(-3000)}`)
  fs.writeFileSync(MARKER, `${SCHEMATHESIS_VERSION}\n`)
  return bin
}
