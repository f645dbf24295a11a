import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { eventDefinitions } from './domain-event.ts'
import { generateJsonSchemas, jsonSchemaFileName, jsonSchemaIndexFileName } from './json-schemas.ts'

const schemasDir = fileURLToPath(new URL('../schemas/', import.meta.url))
const stale = 'libs/events/schemas/ is stale: run `npm run events:schemas` and commit the result'

function committedFiles(): Record<string, string> {
  const names = readdirSync(schemasDir).filter((name) => name.endsWith('.json'))
  return Object.fromEntries(names.map((name) => [name, readFileSync(join(schemasDir, name), 'utf8')]))
}

describe('JSON Schemas', () => {
  it('are committed exactly as generated from the zod schemas', () => {
    const generated = generateJsonSchemas()
    const committed = committedFiles()
    expect(Object.keys(committed).sort(), stale).toEqual(Object.keys(generated).sort())
    for (const [name, content] of Object.entries(generated))
      expect(committed[name], `${name}: ${stale}`).toBe(content)
  })

  it('are generated deterministically, one file per type and version plus an index', () => {
    const files = generateJsonSchemas()
    expect(generateJsonSchemas()).toEqual(files)
    expect(Object.keys(files)).toEqual([
      ...eventDefinitions.map((definition) => jsonSchemaFileName(definition.type, definition.version)),
      jsonSchemaIndexFileName,
    ])
    for (const content of Object.values(files)) expect(content.endsWith('}\n')).toBe(true)
  })

  it('describe the envelope and the strict payload of their type and version (draft 2020-12)', () => {
    const files = generateJsonSchemas()
    const schema = JSON.parse(files['chatbot.created.v1.json'] ?? '{}')
    expect(schema).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'urn:cas:events:chatbot.created:v1',
      title: 'chatbot.created v1',
      properties: {
        type: { const: 'chatbot.created' },
        version: { const: 1 },
        position: { type: 'string', pattern: '^(0|[1-9]\\d*)$' },
        payload: { additionalProperties: false, required: ['name', 'settings', 'apiKeyPrefix'] },
      },
    })
    expect(schema.required).toEqual([
      'id',
      'type',
      'version',
      'occurredAt',
      'orgId',
      'chatbotId',
      'streamId',
      'streamVersion',
      'position',
      'metadata',
      'payload',
    ])
    // The envelope stays open: a reader must not break when an envelope field is added.
    expect(schema).not.toHaveProperty('additionalProperties')
    expect(schema.examples?.[0]?.payload).toEqual(eventDefinitionExample('chatbot.created'))
  })
})

function eventDefinitionExample(type: string) {
  return eventDefinitions.find((definition) => definition.type === type)?.example
}
