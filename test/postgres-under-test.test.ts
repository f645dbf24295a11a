// The suite's own server: TEST_POSTGRES_BINARIES starts it from another installation (CI's Node 24 pass runs
// on the oldest PostgreSQL 14–17 it has, after PostgreSQL-18-only SQL broke 14–17 while CI stayed green).
// The first test's name says which server the run used: .ci/check-test-report.mjs prints it (--postgres).
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createTestDatabase } from './support/database.ts'
import { TEST_POSTGRES_BINARIES, testPostgresBinaries } from './support/postgres-binaries.ts'

const version = inject('postgresVersion')
const major = Math.floor(version / 10_000)

describe('the test run', () => {
  it(`runs on PostgreSQL ${major}`, async () => {
    const db = await createTestDatabase()
    try {
      const { rows } = await db.pool.query<{ version: number }>(
        "SELECT current_setting('server_version_num')::int AS version",
      )
      expect(rows[0]!.version).toBe(version)
    } finally {
      await db.drop()
    }
    expect(major).toBeGreaterThanOrEqual(14)
    const binaries = testPostgresBinaries()
    if (binaries) expect(major).toBe(Number(binaries.version.split('.')[0]))
  })
})

describe(TEST_POSTGRES_BINARIES, () => {
  let scratch: string
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'cas-test-binaries-'))
  })
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true })
  })

  /** A directory laid out as an installation whose bin/postgres prints `banner` for --version. */
  async function installation(name: string, banner: string): Promise<string> {
    const root = path.join(scratch, name)
    await mkdir(path.join(root, 'bin'), { recursive: true })
    for (const program of ['postgres', 'initdb']) {
      const file = path.join(root, 'bin', program)
      await writeFile(file, `#!/bin/sh\necho '${banner}'\n`)
      await chmod(file, 0o755)
    }
    return root
  }

  const binariesOf = (value: string) => testPostgresBinaries({ [TEST_POSTGRES_BINARIES]: value })

  it('unset, leaves the server to the run (the embedded one, DATABASE_URL or a container)', () => {
    expect(testPostgresBinaries({})).toBeUndefined()
  })

  it("names an installation's binaries and its version", async () => {
    const root = await installation('pg15', 'postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)')
    expect(binariesOf(root)).toEqual({
      root,
      initdb: path.join(root, 'bin', 'initdb'),
      postgres: path.join(root, 'bin', 'postgres'),
      version: '15.18',
    })
  })

  it('fails, never falls back, on a value that names no PostgreSQL 14+ installation', async () => {
    expect(() => binariesOf('')).toThrow(/TEST_POSTGRES_BINARIES="" .*not an absolute path/)
    expect(() => binariesOf('usr/lib/postgresql/15')).toThrow(/not an absolute path/)
    const missing = path.join(scratch, 'missing')
    expect(() => binariesOf(missing)).toThrow(
      `${path.join(missing, 'bin', 'initdb')} is not an executable file`,
    )
    const pg13 = await installation('pg13', 'postgres (PostgreSQL) 13.9')
    expect(() => binariesOf(pg13)).toThrow(/it is PostgreSQL 13\.9/)
    const other = await installation('other', 'something else 15')
    expect(() => binariesOf(other)).toThrow(/--version printed "something else 15"/)
  })
})
