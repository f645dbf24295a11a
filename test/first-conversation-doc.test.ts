import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { FastifyInstance } from 'fastify'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { createChatbot } from './support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from './support/database.ts'
import { buildTestGateway } from './support/gateway.ts'
import { journalEvents } from './support/journal.ts'

const run = promisify(execFile)
const doc = readFileSync(fileURLToPath(new URL('../docs/first-conversation.md', import.meta.url)), 'utf8')

interface Block {
  readonly lang: string
  readonly code: string
  /** The Markdown before it (to find a block by its heading or a comment). */
  readonly before: string
}

/** The fenced code blocks of the page, in order. */
function blocks(): Block[] {
  return [...doc.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1]!,
    code: m[2]!,
    before: doc.slice(0, m.index),
  }))
}

/** The first block after `marker`. */
function blockAfter(marker: string): Block {
  const at = doc.indexOf(marker)
  expect(at, `"${marker}" in docs/first-conversation.md`).toBeGreaterThanOrEqual(0)
  const block = blocks().find((b) => b.before.length > at)
  if (!block) throw new Error(`no code block after "${marker}"`)
  return block
}

// "Send your first conversation", run as a reader would: the curl example against the service itself.
describe('docs/first-conversation.md', () => {
  let db: TestDatabase
  let app: FastifyInstance
  let env: Record<string, string>
  let cookie: string
  const dir = mkdtempSync(join(tmpdir(), 'first-conversation-'))
  beforeAll(async () => {
    db = await createTestDatabase()
    ;({ app } = await buildTestGateway(db))
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    cookie = (await signUp(app)).cookie
    const { apiKey } = await createChatbot(app, cookie)
    env = {
      PATH: process.env.PATH ?? '',
      CONVERSATION_ANALYTICS_URL: address,
      CONVERSATION_ANALYTICS_API_KEY: apiKey,
    }
  })
  afterAll(async () => {
    await app?.close()
    await db?.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  /** The environment of the page's examples, for a chatbot of its own. */
  async function freshChatbotEnv(): Promise<Record<string, string>> {
    const { apiKey } = await createChatbot(app, cookie, { name: `bot ${Math.random()}` })
    return { ...env, CONVERSATION_ANALYTICS_API_KEY: apiKey }
  }

  /** Runs the curl example: after another example stored the same messages, it stores nothing new. */
  async function curl(runEnv: Record<string, string>) {
    const block = blockAfter('<!-- The block below is run against the service')
    return JSON.parse((await run('sh', ['-c', block.code], { env: runEnv })).stdout)
  }

  it('the curl example captures a conversation with the key from the environment, and sent again stores nothing new', async () => {
    const curl = blockAfter('<!-- The block below is run against the service')
    expect(curl.lang).toBe('sh')
    const first = JSON.parse((await run('sh', ['-c', curl.code], { env })).stdout)
    expect(first).toMatchObject({ ok: true, messagesStored: 2, analysisQueued: true, warnings: [] })
    const again = JSON.parse((await run('sh', ['-c', curl.code], { env })).stdout)
    expect(again).toMatchObject({ ok: true, conversationId: first.conversationId, messagesStored: 0 })
    // The answer the page shows has the same fields
    const shown = JSON.parse(blockAfter('The answer:').code)
    expect(Object.keys(shown).sort()).toEqual(Object.keys(first).sort())
  })

  it('the curl example is refused without a valid key (what a reader who forgot the export sees)', async () => {
    const curl = blockAfter('<!-- The block below is run against the service')
    const { stdout } = await run('sh', ['-c', curl.code], {
      env: { ...env, CONVERSATION_ANALYTICS_API_KEY: 'svc_live_not-a-key' },
    })
    expect(JSON.parse(stdout).error.code).toBe('unauthorized')
  })

  it('the TypeScript example sends the same conversation through the SDK (sdks/typescript)', async () => {
    const runEnv = await freshChatbotEnv()
    const block = blockAfter('## TypeScript')
    expect(block.lang).toBe('sh')
    const example = blocks().find((b) => b.lang === 'ts' && b.before.length > block.before.length)!
    expect(example.code).toContain("from '@conversation-analytics/sdk'")
    // The SDK from this repository rather than from the registry: its source, run by tsx.
    const sdk = fileURLToPath(new URL('../sdks/typescript/src/index.ts', import.meta.url))
    const file = join(dir, 'typescript-example.mts')
    writeFileSync(file, example.code.replace("'@conversation-analytics/sdk'", JSON.stringify(sdk)))
    const tsx = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url))
    await run(tsx, [file], { env: runEnv })
    // It stored the page's two messages: the curl example, the same conversation, finds nothing new
    expect(await curl(runEnv)).toMatchObject({ ok: true, messagesStored: 0 })
  })

  it('installs the SDKs from a checkout, as neither is on its registry yet: the file npm pack makes, the folder pip builds', () => {
    const pkg = JSON.parse(
      readFileSync(fileURLToPath(new URL('../sdks/typescript/package.json', import.meta.url)), 'utf8'),
    )
    const tarball = `${pkg.name.replace('@', '').replace('/', '-')}-${pkg.version}.tgz`
    const npm = blockAfter('## TypeScript').code
    expect(npm).toContain('npm pack -w sdks/typescript')
    expect(npm).toContain(`npm install /path/to/the/checkout/${tarball}`)
    const pip = blockAfter('## Python').code
    expect(pip.trim()).toBe('pip install /path/to/the/checkout/sdks/python')
    const pyproject = readFileSync(
      fileURLToPath(new URL('../sdks/python/pyproject.toml', import.meta.url)),
      'utf8',
    )
    expect(pyproject).toContain('name = "conversation-analytics"')
  })

  it('the Python example sends the same conversation through the SDK (sdks/python)', async () => {
    const runEnv = await freshChatbotEnv()
    const block = blockAfter('## Python')
    expect(block.lang).toBe('sh')
    const example = blocks().find((b) => b.lang === 'python' && b.before.length > block.before.length)!
    expect(example.code).toContain('from conversation_analytics import Client')
    // The SDK from this repository rather than from PyPI (it needs nothing but the standard library).
    const sdk = fileURLToPath(new URL('../sdks/python/src', import.meta.url))
    await run('python3', ['-c', example.code], { env: { ...runEnv, PYTHONPATH: sdk } })
    expect(await curl(runEnv)).toMatchObject({ ok: true, messagesStored: 0 })
  })

  it('the plain OpenTelemetry example (Node.js) exports its GenAI span to /v1/traces, which stores the conversation', async () => {
    const { apiKey, chatbot } = await createChatbot(app, cookie, { name: 'otel bot' })
    const section = blockAfter('## A plain OpenTelemetry setup')
    const example = blocks().find((b) => b.lang === 'ts' && b.before.length > section.before.length)!
    expect(example.code).toContain("from '@opentelemetry/sdk-trace-node'")
    // Run from the repository, where the OpenTelemetry packages are installed (devDependencies).
    const file = fileURLToPath(new URL('./.first-conversation-otel.mts', import.meta.url))
    writeFileSync(file, example.code)
    try {
      const tsx = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url))
      await run(tsx, [file], { env: { ...env, CONVERSATION_ANALYTICS_API_KEY: apiKey } })
    } finally {
      rmSync(file, { force: true })
    }
    const { rows } = await db.pool.query<{ id: string }>(
      'SELECT id FROM capture_conversations WHERE chatbot_id = $1 AND external_id = $2',
      [chatbot.id, 'otel-conversation'],
    )
    expect(rows).toHaveLength(1)
    const events = await journalEvents(db.pool, 'conversation', rows[0]!.id)
    const messages = events
      .filter((e) => e.type === 'conversation.messages-captured')
      .flatMap((e) => e.payload.messages as unknown as { role: string; content: string }[])
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'How do I reset my password?'],
      ['assistant', 'Use the link on the sign-in page.'],
    ])
    const started = events.find((e) => e.type === 'conversation.started')
    expect(started?.payload.user).toMatchObject({ id: 'u-42' })
  })

  it('the OpenTelemetry variables point the exporter at /v1/traces with the key', async () => {
    const vars = blockAfter('## A plain OpenTelemetry setup')
    const { stdout } = await run('sh', ['-c', `${vars.code}\nenv`], { env })
    expect(stdout).toContain(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=${env.CONVERSATION_ANALYTICS_URL}/v1/traces`)
    expect(stdout).toContain(
      `OTEL_EXPORTER_OTLP_TRACES_HEADERS=Authorization=Bearer%20${env.CONVERSATION_ANALYTICS_API_KEY}`,
    )
  })

  it('every Python and TypeScript example is well-formed code', async () => {
    const python = blocks().filter((b) => b.lang === 'python')
    const typescript = blocks().filter((b) => b.lang === 'ts')
    expect(python.length).toBeGreaterThanOrEqual(4)
    expect(typescript.length).toBeGreaterThanOrEqual(4)
    for (const block of python) {
      await run('python3', ['-c', 'import ast, sys; ast.parse(sys.argv[1])', block.code])
    }
    for (const block of typescript) {
      const out = ts.transpileModule(block.code, {
        reportDiagnostics: true,
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      })
      expect(out.diagnostics?.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([])
    }
  })

  it('is linked from the first screen of the README', () => {
    const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8')
    const firstScreen = readme.split('\n').slice(0, 20).join('\n')
    expect(firstScreen).toContain('(docs/first-conversation.md)')
  })
})
