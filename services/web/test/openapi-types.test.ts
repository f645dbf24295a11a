import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { generateTypes, readOpenApiDocument, TARGETS } from '../../../infra/openapi-types.ts'

describe("the dashboard's generated API types", () => {
  it('are what openapi-typescript makes of openapi/openapi.json now (else: npm run openapi:types)', async () => {
    const fresh = await generateTypes(await readOpenApiDocument(), TARGETS.web)
    expect(
      await readFile(TARGETS.web.file, 'utf8'),
      'services/web/src/api/openapi.gen.ts is stale: run `npm run openapi:types`',
    ).toBe(fresh)
  })

  it('cover every session route the dashboard calls', async () => {
    const generated = await readFile(TARGETS.web.file, 'utf8')
    for (const path of [
      '/api/v1/auth/me',
      '/api/v1/chatbots/{id}',
      '/api/v1/analytics/topics',
      '/api/v1/status',
    ])
      expect(generated).toContain(`"${path}": {`)
    expect(generated).not.toContain('"/api/v1/capture": {')
  })
})
