import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_CONVERSATION } from '../../gateway/src/chatbots/test-conversation.ts'
import {
  curlExample,
  exampleCapture,
  javascriptExample,
  KEY_PLACEHOLDER,
  opentelemetryExample,
  pythonSdkExample,
  shellQuote,
  typescriptSdkExample,
} from '../src/lib/capture-examples.ts'

const run = promisify(execFile)
const KEY = 'svc_live_0123456789abcdef0123456789abcdef'

interface Received {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: unknown
}

// The onboarding examples are meant to be pasted as they are: run them, against a stand-in server.
describe('the capture examples the onboarding shows', () => {
  let server: Server
  let origin: string
  const received: Received[] = []
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk) => {
        body += chunk
      })
      req.on('end', () => {
        received.push({ method: req.method!, url: req.url!, headers: req.headers, body: JSON.parse(body) })
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify({ ok: true, messagesStored: 2 }))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const expectCapture = (r: Received | undefined, key: string) => {
    expect(r).toMatchObject({ method: 'POST', url: '/api/v1/capture', body: exampleCapture() })
    expect(r!.headers.authorization).toBe(`Bearer ${key}`)
    expect(r!.headers['content-type']).toBe('application/json')
  }

  it('the curl command sends the example conversation with the key', async () => {
    received.length = 0
    const { stdout } = await run('sh', ['-c', curlExample(origin, KEY)])
    expect(JSON.parse(stdout)).toEqual({ ok: true, messagesStored: 2 })
    expectCapture(received[0], KEY)
  })

  it('the JavaScript sends the same, and both use a placeholder when the key is not known', async () => {
    received.length = 0
    const { stdout } = await run(process.execPath, [
      '--input-type=module',
      '-e',
      javascriptExample(origin, KEY),
    ])
    expect(stdout).toContain('200')
    expectCapture(received[0], KEY)
    expect(curlExample(origin, undefined)).toContain(`Bearer ${KEY_PLACEHOLDER}`)
    expect(javascriptExample(origin, undefined)).toContain(`Bearer ${KEY_PLACEHOLDER}`)
    expect(exampleCapture().messages).toHaveLength(2)
  })

  it('are what "Send a test conversation" sends (the server sends it, with the chatbot\'s key)', () => {
    expect(exampleCapture()).toEqual(TEST_CONVERSATION)
  })

  it('quotes text for the shell whatever it holds', async () => {
    const text = `it's "quoted" $HOME \`x\` \\ done`
    const { stdout } = await run('sh', ['-c', `printf %s ${shellQuote(text)}`])
    expect(stdout).toBe(text)
  })
})

const ORIGIN = 'https://analytics.example.com'

// The SDK snippets, run with stand-ins for the SDKs that record what the snippet asks of them: the options
// it builds the client with and the captures it makes, in the SDKs' own signatures (sdks/typescript
// ConversationAnalytics({ apiKey, baseUrl }).capture({...}); sdks/python Client(api_key=, base_url=)
// .capture(conversation_id, messages, user=...)).
describe('the SDK and OpenTelemetry snippets the onboarding shows beside curl', () => {
  const dir = mkdtempSync(join(tmpdir(), 'onboarding-snippets-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('the TypeScript SDK snippet is valid TypeScript that captures the example conversation with the key', async () => {
    const code = typescriptSdkExample(ORIGIN, KEY)
    const out = ts.transpileModule(code, {
      reportDiagnostics: true,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    })
    expect(out.diagnostics).toEqual([])
    expect(code).toContain("import { ConversationAnalytics } from '@conversation-analytics/sdk'")
    const standIn = [
      'const calls = []',
      'class ConversationAnalytics {',
      "  constructor(options) { calls.push(['new', options]) }",
      "  capture(body) { calls.push(['capture', body]) }",
      "  async shutdown() { calls.push(['shutdown']) }",
      '}',
    ].join('\n')
    const program = `${standIn}\n${out.outputText.replace(/^import .*$/m, '')}\nconsole.log(JSON.stringify(calls))`
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', program])
    expect(JSON.parse(stdout)).toEqual([
      ['new', { apiKey: KEY, baseUrl: ORIGIN }],
      ['capture', exampleCapture()],
      ['shutdown'],
    ])
    expect(typescriptSdkExample(ORIGIN, undefined)).toContain(`apiKey: "${KEY_PLACEHOLDER}"`)
  })

  it('the Python SDK snippet is valid Python that captures the example conversation with the key', async () => {
    writeFileSync(
      join(dir, 'conversation_analytics.py'),
      [
        'import json',
        'calls = []',
        'class Client:',
        '    def __init__(self, api_key=None, base_url=None):',
        '        calls.append(["new", {"api_key": api_key, "base_url": base_url}])',
        '    def capture(self, conversation_id, messages, user=None):',
        '        calls.append(["capture", {"conversationId": conversation_id, "messages": messages, "user": user}])',
        '    def shutdown(self):',
        '        calls.append(["shutdown"])',
        '        print(json.dumps(calls))',
      ].join('\n'),
    )
    const { stdout } = await run('python3', ['-c', pythonSdkExample(ORIGIN, KEY)], {
      env: { ...process.env, PYTHONPATH: dir },
    })
    expect(JSON.parse(stdout)).toEqual([
      ['new', { api_key: KEY, base_url: ORIGIN }],
      ['capture', exampleCapture()],
      ['shutdown'],
    ])
    expect(pythonSdkExample(ORIGIN, undefined)).toContain(`api_key="${KEY_PLACEHOLDER}"`)
  })

  it('the SDK snippets install from a checkout, as docs/first-conversation.md does: neither SDK is on its registry yet', () => {
    // Regression: they said npm install @conversation-analytics/sdk (404) and pip install conversation-analytics (none).
    expect(typescriptSdkExample(ORIGIN, KEY)).toContain('npm pack -w sdks/typescript')
    expect(typescriptSdkExample(ORIGIN, KEY)).not.toContain('npm install @conversation-analytics/sdk')
    expect(pythonSdkExample(ORIGIN, KEY)).toContain(
      'pip install /path/to/a/checkout/of/this/service/sdks/python',
    )
    expect(pythonSdkExample(ORIGIN, KEY)).not.toContain('pip install conversation-analytics')
  })

  it('the OpenTelemetry snippet sets the standard OTLP exporter variables to /v1/traces with the key', async () => {
    const { stdout } = await run('sh', ['-c', `${opentelemetryExample(ORIGIN, KEY)}\nenv`], {
      env: { PATH: process.env.PATH ?? '' },
    })
    const vars = Object.fromEntries(
      stdout
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('OTEL_'))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    )
    expect(vars).toEqual({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${ORIGIN}/v1/traces`,
      // The OTLP exporter variables percent-decode header values.
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: `Authorization=Bearer%20${KEY}`,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
    })
    expect(opentelemetryExample(ORIGIN, undefined)).toContain(`Bearer%20${KEY_PLACEHOLDER}`)
  })
})
