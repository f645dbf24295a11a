/**
 * docs/first-conversation.md's integration examples, run as a reader would, against the service (the
 * gateway listening on a port, with the projector): the OpenAI Python client without OpenTelemetry (our
 * Python SDK) and with it (OpenLLMetry's instrumentation exporting to /v1/traces), and the Vercel AI SDK's
 * telemetry. The model is a fake OpenAI-compatible server in this process (OPENAI_BASE_URL points at
 * it); everything else is the real thing: the Python packages of the page's `pip install` lines come from
 * PyPI into a virtual environment under .cache/ (made again when those lines change), `ai` and
 * `@ai-sdk/openai` are devDependencies. Each conversation is then read back through the API.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChatbot } from './support/chatbots.ts'
import { type OtelStack, type ReadConversation, startOtelStack, turns } from './support/otel.ts'
import { ensureVenv as ensurePythonVenv, run } from './support/python.ts'
import { waitFor } from './support/wait.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const doc = readFileSync(path.join(ROOT, 'docs', 'first-conversation.md'), 'utf8')
const VENV = path.join(ROOT, '.cache', 'first-conversation-venv')
const ANSWER = 'Use the link on the sign-in page.'
const QUESTION = 'How do I reset my password?'

interface Block {
  readonly lang: string
  readonly code: string
  readonly at: number
}

const blocks: Block[] = [...doc.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
  lang: m[1]!,
  code: m[2]!,
  at: m.index,
}))

/** The first block of `lang` after `marker` (a heading), or holding it (a comment). */
function blockAfter(marker: string, lang: string): Block {
  const at = doc.indexOf(marker)
  expect(at, `"${marker}" in docs/first-conversation.md`).toBeGreaterThanOrEqual(0)
  const block = blocks.find((b) => b.at + b.code.length > at && b.lang === lang)
  if (!block) throw new Error(`no ${lang} block after "${marker}"`)
  return block
}

/** The packages of the `pip install` lines of the OpenAI Python sections (our SDK, named by its path in a checkout, comes from the repository). */
function pipPackages(): string[] {
  const lines = [
    blockAfter('### Without OpenTelemetry', 'sh'),
    blockAfter('### With OpenTelemetry instrumentation', 'sh'),
  ].map((b) => b.code.replace(/\\\n/g, ' '))
  const packages = lines.flatMap((l) =>
    l
      .replace(/^\s*pip install/, '')
      .trim()
      .split(/\s+/),
  )
  return [...new Set(packages.filter((p) => !p.endsWith('/sdks/python')))].sort()
}

/** The venv's python, (re)installing when the page's `pip install` lines changed since the last install. */
async function ensureVenv(): Promise<string> {
  const requirements = pipPackages()
  expect(requirements).toContain('openai')
  return ensurePythonVenv(VENV, requirements, requirements.join('\n'))
}

/**
 * A fake OpenAI: Chat Completions (what the OpenAI Python client calls) and Responses (what the AI SDK's
 * `openai(model)` calls), each answering ANSWER. It records what it was asked.
 */
function fakeOpenAI(): { server: Server; requests: { path: string; body: Record<string, unknown> }[] } {
  const requests: { path: string; body: Record<string, unknown> }[] = []
  let n = 0
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')
      requests.push({ path: req.url ?? '', body })
      n += 1
      const model = String(body.model ?? 'gpt-4o-mini')
      const created = Math.floor(Date.now() / 1000)
      let answer: unknown
      if (req.method === 'POST' && req.url === '/v1/chat/completions') {
        answer = {
          id: `chatcmpl-fake-${n}`,
          object: 'chat.completion',
          created,
          model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: ANSWER, refusal: null },
              logprobs: null,
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 },
        }
      } else if (req.method === 'POST' && req.url === '/v1/responses') {
        answer = {
          id: `resp_fake${n}`,
          object: 'response',
          created_at: created,
          status: 'completed',
          model,
          error: null,
          incomplete_details: null,
          output: [
            {
              type: 'message',
              id: `msg_fake${n}`,
              status: 'completed',
              role: 'assistant',
              content: [{ type: 'output_text', text: ANSWER, annotations: [] }],
            },
          ],
          usage: {
            input_tokens: 12,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 9,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 21,
          },
        }
      } else {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: `no ${req.method} ${req.url}` } }))
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer))
    })
  })
  return { server, requests }
}

describe('docs/first-conversation.md: the OpenAI Python client and the Vercel AI SDK', () => {
  const cleanups: (() => Promise<unknown>)[] = []
  let stack: OtelStack
  let python: string
  let openaiUrl: string
  const fake = fakeOpenAI()

  beforeAll(async () => {
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise((resolve) => fake.server.close(resolve)))
    openaiUrl = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}/v1`
    ;[python, stack] = await Promise.all([ensureVenv(), startOtelStack(cleanups)])
  }, 900_000)
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })

  /** A chatbot of its own, and the environment the page's examples read. */
  async function chatbotEnv(name: string) {
    const { apiKey, chatbot } = await createChatbot(stack.pipeline.app, stack.cookie, { name })
    const env = {
      PATH: `${path.join(VENV, 'bin')}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME ?? '/tmp',
      CONVERSATION_ANALYTICS_URL: stack.baseUrl,
      CONVERSATION_ANALYTICS_API_KEY: apiKey,
      OPENAI_BASE_URL: openaiUrl,
      OPENAI_API_KEY: 'sk-test-not-a-key',
      PYTHONDONTWRITEBYTECODE: '1',
    }
    return { chatbotId: chatbot.id, env }
  }

  /** The chatbot's only conversation, once it has `count` messages. */
  async function onlyConversation(chatbotId: string, count: number): Promise<ReadConversation> {
    const get = (url: string) =>
      stack.pipeline.app
        .inject({ method: 'GET', url, headers: { cookie: stack.cookie } })
        .then((r) => r.json())
    return waitFor(
      async () => {
        const list = await get(`/api/v1/conversations?chatbotId=${chatbotId}`)
        if (list.conversations?.length !== 1) return undefined
        const { conversation } = (await get(`/api/v1/conversations/${list.conversations[0].id}`)) as {
          conversation: ReadConversation
        }
        return conversation.messages.length >= count && conversation
      },
      { what: `the conversation of chatbot ${chatbotId}`, timeoutMs: 60_000 },
    )
  }

  it('the OpenAI Python client without OpenTelemetry: each turn captured with the Python SDK', async () => {
    const { chatbotId, env } = await chatbotEnv('openai python')
    const example = blockAfter('### Without OpenTelemetry', 'python')
    const asked = fake.requests.length
    // Our SDK from the repository (it needs nothing but the standard library), openai from PyPI.
    const out = await run(python, ['-c', example.code], {
      timeoutMs: 120_000,
      env: { ...env, PYTHONPATH: path.join(ROOT, 'sdks', 'python', 'src') },
    })
    expect(out.code, out.output.slice(-4000)).toBe(0)
    expect(out.stdout.trim()).toBe(ANSWER)
    const calls = fake.requests.slice(asked)
    expect(calls.map((c) => c.path)).toEqual(['/v1/chat/completions'])
    expect(calls[0]!.body.messages).toEqual([
      { role: 'system', content: 'You are a helpful support assistant.' },
      { role: 'user', content: QUESTION },
    ])
    const conversation = await onlyConversation(chatbotId, 2)
    // The system prompt is not sent: the user's message and the answer, once each
    expect(turns(conversation)).toEqual([`user: ${QUESTION}`, `assistant: ${ANSWER}`])
    expect(conversation.user).toMatchObject({ id: 'u-42' })
  }, 180_000)

  it('the OpenAI Python client with OpenTelemetry: OpenLLMetry spans exported to /v1/traces', async () => {
    const { chatbotId, env } = await chatbotEnv('openai python otel')
    const example = blockAfter('### With OpenTelemetry instrumentation', 'python')
    const asked = fake.requests.length
    const out = await run(python, ['-c', example.code], { timeoutMs: 120_000, env })
    expect(out.code, out.output.slice(-4000)).toBe(0)
    expect(out.stdout.trim()).toBe(ANSWER)
    expect(fake.requests.slice(asked).map((c) => c.path)).toEqual(['/v1/chat/completions'])
    const conversation = await onlyConversation(chatbotId, 2)
    expect(turns(conversation)).toEqual([`user: ${QUESTION}`, `assistant: ${ANSWER}`])
    expect(conversation.user).toMatchObject({ id: 'u-42' })
    // The conversation is the session id from the baggage (a uuid), not the trace
    expect(conversation.conversationId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    )
  }, 180_000)

  it("the Vercel AI SDK's telemetry, outside Next.js with the plain OpenTelemetry provider", async () => {
    const { chatbotId, env } = await chatbotEnv('vercel ai sdk')
    const example = blockAfter('// wherever your chatbot answers', 'ts')
    expect(example.code).toContain("from '@ai-sdk/openai'")
    // As the page says: the provider of the plain OpenTelemetry section, registered, then the AI SDK's call.
    const plain = blockAfter('## A plain OpenTelemetry setup', 'ts').code
    const setup = plain.slice(0, plain.indexOf('const tracer ='))
    expect(setup).toContain('const provider = new NodeTracerProvider(')
    const script = `${setup}provider.register()\n\n${example.code}\nconsole.log(text)\nawait provider.shutdown()\n`
    // Inside the repository, where `ai` and the OpenTelemetry packages are installed (devDependencies).
    const file = path.join(ROOT, 'test', `.first-conversation-vercel-${process.pid}.mts`)
    writeFileSync(file, script)
    const asked = fake.requests.length
    let out: Awaited<ReturnType<typeof run>>
    try {
      out = await run(path.join(ROOT, 'node_modules', '.bin', 'tsx'), [file], { timeoutMs: 120_000, env })
    } finally {
      rmSync(file, { force: true })
    }
    expect(out.code, out.output.slice(-4000)).toBe(0)
    expect(out.stdout.trim()).toBe(ANSWER)
    // openai(model) calls the Responses API, with the page's message
    const calls = fake.requests.slice(asked)
    expect(calls.map((c) => c.path)).toEqual(['/v1/responses'])
    expect(JSON.stringify(calls[0]!.body.input)).toContain(QUESTION)
    const conversation = await onlyConversation(chatbotId, 2)
    expect(conversation.conversationId).toBe('first-conversation')
    expect(turns(conversation)).toEqual([`user: ${QUESTION}`, `assistant: ${ANSWER}`])
    expect(conversation.user).toMatchObject({ id: 'u-42' })
  }, 180_000)

  it('the plain OpenTelemetry example in Python exports its GenAI span to /v1/traces', async () => {
    const { chatbotId, env } = await chatbotEnv('plain otel python')
    const example = blockAfter('The same from Python:', 'python')
    expect(example.code).toContain('from opentelemetry.sdk.trace import TracerProvider')
    const out = await run(python, ['-c', example.code], { timeoutMs: 120_000, env })
    expect(out.code, out.output.slice(-4000)).toBe(0)
    const conversation = await onlyConversation(chatbotId, 2)
    expect(conversation.conversationId).toBe('otel-conversation')
    expect(turns(conversation)).toEqual([`user: ${QUESTION}`, `assistant: ${ANSWER}`])
    expect(conversation.user).toMatchObject({ id: 'u-42' })
  }, 180_000)
})
