import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '../../..')

/** Starts a service's main.ts with `env` and returns how it exited (a bad config stops it before any I/O). */
function start(service: string, env: Record<string, string>) {
  const child = spawnSync(process.execPath, ['--import', 'tsx', `services/${service}/src/main.ts`], {
    cwd: root,
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { status: child.status, stderr: child.stderr }
}

describe('a service process', () => {
  it('stops with 78, naming each bad variable of the groups it reads, and no other', () => {
    const env = { PORT: 'eighty', ANALYSIS_PROVIDER: 'telepathy', RELAY_BATCH_SIZE: 'many' }
    const relay = start('relay', env)
    expect(relay.status).toBe(78)
    expect(relay.stderr).toMatch(/PORT/)
    expect(relay.stderr).toMatch(/RELAY_BATCH_SIZE/)
    expect(relay.stderr).not.toMatch(/ANALYSIS_PROVIDER/)
    const analysis = start('analysis', env)
    expect(analysis.status).toBe(78)
    expect(analysis.stderr).toMatch(/ANALYSIS_PROVIDER/)
    expect(analysis.stderr).not.toMatch(/RELAY_BATCH_SIZE/)
  })
})
