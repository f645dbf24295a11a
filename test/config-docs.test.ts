import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { BEGIN, END, readmeWithConfigTables } from '../infra/config-docs.ts'

const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8')

describe("the README's configuration tables", () => {
  it('are what the schema generates (run `npm run docs:config` after changing libs/config)', () => {
    expect(readme).toContain(BEGIN)
    expect(readme).toContain(END)
    expect(readmeWithConfigTables(readme)).toBe(readme)
  })

  it('would be told apart from a hand edit', () => {
    const edited = readme.replace('| `PORT` ', '| `PORTS`')
    expect(readmeWithConfigTables(edited)).not.toBe(edited)
  })
})
