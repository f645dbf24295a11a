/**
 * npm run docs:config: writes the README's configuration tables from the schema (libs/config) and the
 * groups each service reads. test/config-docs.test.ts fails while the README differs from it.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { readmeWithConfigTables } from './config-docs.ts'

const readmePath = fileURLToPath(new URL('../README.md', import.meta.url))
const before = readFileSync(readmePath, 'utf8')
const after = readmeWithConfigTables(before)
writeFileSync(readmePath, after)
console.log(
  after === before
    ? 'README.md: configuration tables already current'
    : 'README.md: configuration tables written',
)
