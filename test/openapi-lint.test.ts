import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const checkedIn = readFileSync(join(root, 'openapi/openapi.json'), 'utf8')
const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Redocly CLI with the repository's rules (redocly.yaml), as `npm run openapi:lint` runs it. */
async function lint(doc: unknown): Promise<{ ok: boolean; output: string }> {
  const file = join(dir, `openapi-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(file, JSON.stringify(doc, null, 2))
  try {
    const { stdout, stderr } = await promisify(execFile)(
      join(root, 'node_modules/.bin/redocly'),
      ['lint', file, '--config', join(root, 'redocly.yaml'), '--format=json'],
      {
        cwd: root,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    )
    return { ok: true, output: stdout + stderr }
  } catch (err) {
    const e = err as { stdout: string; stderr: string }
    return { ok: false, output: e.stdout + e.stderr }
  }
}

/** The rule ids Redocly reported. */
function rules(output: string): string[] {
  const json = output.slice(output.indexOf('{'), output.lastIndexOf('}') + 1)
  return [...new Set((JSON.parse(json).problems as { ruleId: string }[]).map((p) => p.ruleId))].sort()
}

const fresh = () => JSON.parse(checkedIn)

describe('the OpenAPI lint (redocly.yaml)', () => {
  it('passes the checked-in document', async () => {
    const result = await lint(fresh())
    expect(result.ok, result.output).toBe(true)
  })

  it('refuses an operation without summary, description or operationId, and a duplicate operationId', async () => {
    const doc = fresh()
    const capture = doc.paths['/api/v1/capture'].post
    delete capture.summary
    delete capture.description
    delete capture.operationId
    doc.paths['/api/v1/chatbots'].get.operationId = doc.paths['/api/v1/chatbots'].post.operationId
    const result = await lint(doc)
    expect(result.ok).toBe(false)
    expect(rules(result.output)).toEqual(
      expect.arrayContaining([
        'operation-description',
        'operation-operationId',
        'operation-operationId-unique',
        'operation-summary',
      ]),
    )
  })

  it('refuses "Default Response", a response without an example, and an example its schema refuses', async () => {
    const doc = fresh()
    const ok = doc.paths['/api/v1/capture'].post.responses['200']
    ok.description = 'Default Response'
    delete ok.content['application/json'].example
    doc.paths['/api/v1/status'].get.responses['200'].content['application/json'].example.projection.state =
      'sleeping'
    const result = await lint(doc)
    expect(result.ok).toBe(false)
    expect(rules(result.output)).toEqual(
      expect.arrayContaining([
        'no-invalid-media-type-examples',
        'rule/response-description',
        'rule/response-example',
      ]),
    )
  })
})
