import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { generateTypes, readOpenApiDocument, TARGETS } from '../../../infra/openapi-types.ts'

describe("the SDK's generated types", () => {
  it('are what openapi-typescript makes of openapi/openapi.json now (else: npm run openapi:types)', async () => {
    const fresh = await generateTypes(await readOpenApiDocument(), TARGETS.sdk)
    expect(
      await readFile(TARGETS.sdk.file, 'utf8'),
      'sdks/typescript/src/openapi.gen.ts is stale: run `npm run openapi:types`',
    ).toBe(fresh)
  })
})
