/**
 * npm run openapi:export: writes the OpenAPI document (the one GET /api/v1/openapi.json serves) to
 * openapi/openapi.json, which the SDKs generate their types from. test/openapi-export.test.ts fails while
 * the checked-in file differs from what the route schemas make.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { buildOpenApiDocument, openApiFileText } from './openapi-document.ts'

const path = fileURLToPath(new URL('../openapi/openapi.json', import.meta.url))
let before = ''
try {
  before = readFileSync(path, 'utf8')
} catch {}
const after = openApiFileText(await buildOpenApiDocument())
writeFileSync(path, after)
console.log(after === before ? 'openapi/openapi.json: already current' : 'openapi/openapi.json: written')
