/**
 * npm run docs:config: writes docs/configuration.md's tables from the schema (libs/config) and the groups
 * each service reads. test/config-docs.test.ts fails while the file differs from it.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { withConfigTables } from './config-docs.ts'

const path = fileURLToPath(new URL('../docs/configuration.md', import.meta.url))
const before = readFileSync(path, 'utf8')
const after = withConfigTables(before)
writeFileSync(path, after)
console.log(
  after === before
    ? 'docs/configuration.md: configuration tables already current'
    : 'docs/configuration.md: configuration tables written',
)
