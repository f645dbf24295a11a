// Writes libs/events/schemas/ from the zod schemas: `npm run events:schemas`.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateJsonSchemas } from '../src/json-schemas.ts'

const schemasDir = fileURLToPath(new URL('../schemas/', import.meta.url))
const files = generateJsonSchemas()

mkdirSync(schemasDir, { recursive: true })
// Published versions are never removed from the definitions, so a file left over is a mistake to clean up.
for (const name of readdirSync(schemasDir)) {
  if (name.endsWith('.json') && !(name in files)) rmSync(join(schemasDir, name))
}
for (const [name, content] of Object.entries(files)) writeFileSync(join(schemasDir, name), content)

console.log(`wrote ${Object.keys(files).length} files to ${schemasDir}`)
