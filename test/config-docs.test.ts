import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { BEGIN, END, withConfigTables } from '../infra/config-docs.ts'

const doc = readFileSync(fileURLToPath(new URL('../docs/configuration.md', import.meta.url)), 'utf8')
const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8')

describe("docs/configuration.md's tables", () => {
  it('are what the schema generates (run `npm run docs:config` after changing libs/config)', () => {
    expect(doc).toContain(BEGIN)
    expect(doc).toContain(END)
    expect(withConfigTables(doc)).toBe(doc)
  })

  it('would be told apart from a hand edit', () => {
    const edited = doc.replace('| `PORT` ', '| `PORTS`')
    expect(withConfigTables(edited)).not.toBe(edited)
  })

  it('are linked from the README, and generated nowhere else', () => {
    expect(readme).toContain('(docs/configuration.md)')
    expect(readme).not.toContain(BEGIN)
  })
})
