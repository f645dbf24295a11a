/**
 * `engines` in package.json says which Node.js versions the project runs on (issue 30, item 5): the
 * LTS lines, each from the first version every dependency (package-lock.json, dev ones included: the
 * tests run on the same Node) accepts. Node 20 is end of life and kept while it still runs: the
 * dependencies that already demand Node 22 are the ones the README names.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean
  minVersion(range: string): { version: string } | null
}

const read = (file: string) => JSON.parse(readFileSync(new URL(`../${file}`, import.meta.url), 'utf8'))
const engines: string = read('package.json').engines.node
const lock = read('package-lock.json') as {
  packages: Record<
    string,
    { name?: string; version?: string; cpu?: string[]; engines?: { node?: string } | string[] }
  >
}

/**
 * Every locked package with a Node.js range, as `name@version`; but the builds for 32-bit x86 CPUs
 * (sharp's for Windows wants Node 20): Node.js has no such builds since 22.
 */
const dependencies = Object.entries(lock.packages).flatMap(([where, pkg]) => {
  const range = !Array.isArray(pkg.engines) ? pkg.engines?.node : undefined
  if (!where.includes('node_modules/') || !range) return []
  if (pkg.cpu?.every((cpu) => cpu === 'ia32')) return []
  const name = pkg.name ?? where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length)
  return [{ id: `${name}@${pkg.version}`, name, range }]
})

/** The dependencies that refuse `version`. */
const refusing = (version: string) =>
  dependencies.filter((d) => !semver.satisfies(version, d.range)).map((d) => d.id)

/** The lowest version `engines` allows on each of its ranges (`^20.19.4 || …` → 20.19.4, …). */
const lineStarts = engines.split('||').map((range) => semver.minVersion(range.trim())!.version)

// Node 20 reached its end of life in April 2026; these already require 22 (the README says so).
const NEED_22 = ['@platformatic/dynamic-buffer', '@platformatic/wasm-utils', 'cookie']

describe('engines', () => {
  it('names the LTS lines: 20 (end of life, still run in CI), 22 and 24 and later', () => {
    expect(lineStarts.map((v) => v.split('.')[0])).toEqual(['20', '22', '24'])
    for (const version of ['20.99.0', '22.99.0', '24.99.0', '26.0.0']) {
      expect(semver.satisfies(version, engines), version).toBe(true)
    }
    for (const version of ['18.20.0', '20.19.0', '21.7.0', '22.12.0', '23.11.0']) {
      expect(semver.satisfies(version, engines), version).toBe(false)
    }
  })

  it('starts each of the 22 and 24 lines at a version every dependency accepts, and stays so on the later ones', () => {
    expect(dependencies.length).toBeGreaterThan(100)
    for (const version of [...lineStarts.slice(1), '22.99.0', '24.99.0', '26.0.0']) {
      expect(refusing(version), `dependencies refusing Node ${version}`).toEqual([])
    }
  })

  it('starts the 20 line where every dependency but the three that need Node 22 accepts it', () => {
    const [twenty] = lineStarts
    const refused = refusing(twenty!).map((id) => id.slice(0, id.lastIndexOf('@')))
    expect([...new Set(refused)].sort(), `dependencies refusing Node ${twenty}`).toEqual(NEED_22)
  })
})
