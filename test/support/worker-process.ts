import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export interface Worker {
  readonly process: ChildProcess
  readonly lines: string[]
  /** Every line the process wrote to stderr. */
  readonly stderrLines: string[]
  /** The last 4,000 characters the process wrote to stderr. */
  stderr(): string
  /** Resolves with the first stdout line (past or future) matching `match`. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>
  /** Sends the signal (SIGKILL by default) and resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>
}

const WORKER = fileURLToPath(new URL('./eventlog-worker.ts', import.meta.url))

/**
 * Runs test/support/eventlog-worker.ts (or `script`) in a child process with the given environment;
 * TypeScript through tsx unless other Node options are given (a built bundle needs none).
 */
export function spawnWorker(
  env: Record<string, string>,
  script = WORKER,
  nodeOptions: readonly string[] = ['--import', 'tsx'],
): Worker {
  const child = spawn(process.execPath, [...nodeOptions, script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  const listeners = new Set<(line: string) => void>()
  let stderr = ''
  const stderrLines: string[] = []
  let stderrBuffered = ''
  let buffered = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    if (process.env.DEBUG_WORKERS) process.stderr.write(chunk)
    buffered += chunk.toString()
    const parts = buffered.split('\n')
    buffered = parts.pop()!
    for (const line of parts) {
      lines.push(line)
      for (const l of listeners) l(line)
    }
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    if (process.env.DEBUG_WORKERS) process.stderr.write(chunk)
    stderr = (stderr + chunk.toString()).slice(-4_000)
    const parts = (stderrBuffered + chunk.toString()).split('\n')
    stderrBuffered = parts.pop()!
    stderrLines.push(...parts)
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))

  return {
    process: child,
    lines,
    stderrLines,
    stderr: () => stderr,
    waitForLine(match, timeoutMs = 30_000) {
      const seen = lines.find(match)
      if (seen) return Promise.resolve(seen)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(listener)
          reject(new Error(`worker printed no matching line in ${timeoutMs} ms; stderr: ${stderr}`))
        }, timeoutMs)
        const listener = (line: string) => {
          if (!match(line)) return
          clearTimeout(timer)
          listeners.delete(listener)
          resolve(line)
        }
        listeners.add(listener)
        child.once('exit', (code) => {
          if (!listeners.has(listener)) return
          clearTimeout(timer)
          listeners.delete(listener)
          reject(new Error(`worker exited (${code}) before a matching line; stderr: ${stderr}`))
        })
      })
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      await exited
    },
  }
}
