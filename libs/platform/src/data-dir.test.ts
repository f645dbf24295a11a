/**
 * Where DATA_DIR is as root when the default one is out of the embedded Postgres's reach (issue 30, item
 * 2). The decisions that need root (the postgres user entering directories) run as root, as CI does.
 */
import { existsSync, statSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { EmbeddedPostgresError } from '@cas/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chooseDataDir, fallbackName, withChosenDataDir } from './data-dir.ts'

const isRoot = process.getuid?.() === 0
if (!isRoot && process.env.CI === 'true') throw new Error('CI runs as root: these tests must run there')

let scratch: string
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'cas-data-dir-'))
  await chmod(scratch, 0o755)
})
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true })
})

/** A checkout at `<scratch>/<name>/checkout` whose parent has `mode`; its default DATA_DIR and a fallback base. */
async function checkoutIn(name: string, mode: number) {
  const home = path.join(scratch, name)
  const checkout = path.join(home, 'checkout')
  await mkdir(checkout, { recursive: true })
  await chmod(home, mode)
  return {
    home,
    checkout,
    config: {
      DATA_DIR: path.join(checkout, '.data'),
      DATA_DIR_FALLBACK: path.join(scratch, `${name}-var-lib`, 'conversation-analytics'),
      DATABASE_URL: undefined,
    },
  }
}

const mode = (p: string) => statSync(p).mode & 0o777

describe('chooseDataDir', () => {
  it('keeps DATA_DIR when not root, when DATA_DIR is set, and when DATABASE_URL is set', () => {
    const config = { DATA_DIR: '/nowhere/.data', DATA_DIR_FALLBACK: '/nowhere/fallback' }
    expect(chooseDataDir(config, {}, { isRoot: false })).toEqual({ dataDir: '/nowhere/.data' })
    const neverAsked = () => {
      throw new Error('the postgres user is not needed')
    }
    expect(
      chooseDataDir(config, { DATA_DIR: '/nowhere/.data' }, { isRoot: true, postgresUser: neverAsked }),
    ).toEqual({ dataDir: '/nowhere/.data' })
    expect(
      chooseDataDir(
        { ...config, DATABASE_URL: 'postgres://u:p@db/x' },
        {},
        { isRoot: true, postgresUser: neverAsked },
      ),
    ).toEqual({ dataDir: '/nowhere/.data' })
  })

  it('names the fallback after the checkout and a hash of its path: stable, and distinct per checkout', () => {
    expect(fallbackName('/root/conversation-analytics/.data')).toMatch(/^conversation-analytics-[0-9a-f]{8}$/)
    expect(fallbackName('/root/conversation-analytics/.data')).toBe(
      fallbackName('/root/conversation-analytics/.data'),
    )
    expect(fallbackName('/root/conversation-analytics/.data')).not.toBe(
      fallbackName('/home/x/conversation-analytics/.data'),
    )
    expect(fallbackName('/root/my checkout!/.data')).toMatch(/^my_checkout_-[0-9a-f]{8}$/)
  })
})

describe.runIf(isRoot)('chooseDataDir as root', () => {
  it('keeps the default DATA_DIR when the postgres user can reach it (created or not), creating nothing', async () => {
    const { config } = await checkoutIn('open', 0o755)
    expect(chooseDataDir(config, {})).toEqual({ dataDir: config.DATA_DIR })
    expect(existsSync(config.DATA_DIR_FALLBACK)).toBe(false)
  })

  it('moves the whole DATA_DIR under DATA_DIR_FALLBACK when the default is in a mode-700 directory: mode 711, the same on every start', async () => {
    const { home, config } = await checkoutIn('private', 0o700)
    const old = process.umask(0o077)
    let first: ReturnType<typeof chooseDataDir>
    try {
      first = chooseDataDir(config, {})
    } finally {
      process.umask(old)
    }
    const expected = path.join(path.resolve(config.DATA_DIR_FALLBACK), fallbackName(config.DATA_DIR))
    expect(first.dataDir).toBe(expected)
    expect(first.notice).toContain(`the data (Postgres, master key, model) lives in ${expected}`)
    expect(first.notice).toContain(`cannot enter ${home} (mode 700`)
    expect(first.notice).toContain('set DATA_DIR to choose another directory')
    // Created passable (not listable) whatever the umask, from the first directory it had to create.
    expect(mode(expected)).toBe(0o711)
    expect(mode(path.resolve(config.DATA_DIR_FALLBACK))).toBe(0o711)
    expect(mode(home)).toBe(0o700)
    expect(existsSync(config.DATA_DIR)).toBe(false)
    expect(chooseDataDir(config, {})).toEqual(first)

    const lines: string[] = []
    const moved = withChosenDataDir({ ...config, PORT: 1 }, {}, { warn: (_f, msg) => lines.push(msg) })
    expect(moved).toEqual({ ...config, PORT: 1, DATA_DIR: expected })
    expect(lines).toEqual([first.notice])
  })

  it('obeys an explicit DATA_DIR even where the postgres user cannot reach it (the embedded server then refuses it)', async () => {
    const { config } = await checkoutIn('explicit', 0o700)
    expect(chooseDataDir(config, { DATA_DIR: config.DATA_DIR })).toEqual({ dataDir: config.DATA_DIR })
    expect(existsSync(config.DATA_DIR_FALLBACK)).toBe(false)
  })

  it('leaves a default DATA_DIR that holds data where it is (its master key and cluster are the data)', async () => {
    const { config } = await checkoutIn('used', 0o700)
    await mkdir(config.DATA_DIR)
    await writeFile(path.join(config.DATA_DIR, 'master.key'), 'x\n', { mode: 0o600 })
    expect(chooseDataDir(config, {})).toEqual({ dataDir: config.DATA_DIR })
    expect(existsSync(config.DATA_DIR_FALLBACK)).toBe(false)
  })

  it("refuses with one line, loosening nothing, when the fallback is out of the postgres user's reach too", async () => {
    const { home, config } = await checkoutIn('both', 0o700)
    const base = path.resolve(config.DATA_DIR_FALLBACK)
    await mkdir(path.dirname(base), { mode: 0o755 })
    await mkdir(base, { mode: 0o700 })
    await chmod(base, 0o700)
    let error: unknown
    try {
      chooseDataDir(config, {})
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(EmbeddedPostgresError)
    const message = (error as Error).message
    expect(message.split('\n')).toHaveLength(1)
    expect(message).toContain(`can enter neither ${home} (mode 700`)
    expect(message).toContain(`nor ${base} (mode 700`)
    expect(message).toContain('Set DATA_DIR to a directory that user can reach')
    expect(mode(base)).toBe(0o700)
    expect(existsSync(path.join(base, fallbackName(config.DATA_DIR)))).toBe(false)
  })
})
