import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { GENERATED_FILE, generateTypes, readOpenApiDocument } from '../scripts/openapi-types.ts'

describe("the SDK's generated types", () => {
  it('are what openapi-typescript makes of openapi/openapi.json now (else: npm run sdk:types)', async () => {
    const fresh = await generateTypes(await readOpenApiDocument())
    expect(
      await readFile(GENERATED_FILE, 'utf8'),
      'sdks/typescript/src/openapi.gen.ts is stale: run `npm run sdk:types`',
    ).toBe(fresh)
  })
})
