import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { buildOpenApiDocument, openApiFileText } from '../infra/openapi-document.ts'

const checkedIn = readFileSync(fileURLToPath(new URL('../openapi/openapi.json', import.meta.url)), 'utf8')

describe('openapi/openapi.json', () => {
  it('is the document the route schemas make (run `npm run openapi:export` after changing a route)', async () => {
    const doc = await buildOpenApiDocument()
    // Compared as text, so that a stale file names the first differing line.
    expect(checkedIn).toBe(openApiFileText(doc))
  })

  it('documents the routes that npm start serves', () => {
    const doc = JSON.parse(checkedIn)
    expect(doc.openapi).toMatch(/^3\./)
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/capture',
        '/api/v1/chatbots',
        '/api/v1/conversations',
        '/api/v1/status',
      ]),
    )
  })
})
