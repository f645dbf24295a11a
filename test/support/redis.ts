import { spawn, spawnSync } from 'node:child_process'
import net from 'node:net'
import { freePort } from '@cas/db'

/** Whether Debian's redis-server (or another on PATH) can be started. */
export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0
}

/** A throwaway redis-server on a free loopback port, without persistence. */
export async function startRedis(): Promise<{
  url: string
  /** SIGSTOP: connections stay open and nothing is answered, as from a Redis that hangs. */
  pause: () => void
  /** SIGCONT: a paused Redis answers again, the commands sent meanwhile first. */
  resume: () => void
  stop: () => Promise<void>
}> {
  const port = await freePort()
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: 'ignore' },
  )
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const deadline = Date.now() + 10_000
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('redis-server did not start')
    await new Promise((r) => setTimeout(r, 25))
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGCONT')
      child.kill('SIGTERM')
      await exited
    },
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
