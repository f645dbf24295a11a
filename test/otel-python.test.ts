/**
 * Issue 33: the official OpenTelemetry SDK for Python (opentelemetry-sdk) exports GenAI spans with the
 * official OTLP/HTTP protobuf exporter (opentelemetry-exporter-otlp-proto-http, gzip) to the gateway
 * listening on a port, with a projector and the analysis service running. The packages come from PyPI
 * into a virtual environment under .cache/ that this test makes (python3 -m venv; again when the pinned
 * requirements change). test/otel/export_genai.py sends the spans and exits non-zero unless every export
 * succeeded; the conversations are then read back through the API.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createChatbot } from './support/chatbots.ts'
import { type OtelStack, startOtelStack, turns } from './support/otel.ts'
import { ensureVenv as ensurePythonVenv, run } from './support/python.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const VENV = path.join(ROOT, '.cache', 'otel-python-venv')
const SCRIPT = path.join(ROOT, 'test', 'otel', 'export_genai.py')
/** The official packages, from PyPI. */
const REQUIREMENTS = ['opentelemetry-sdk>=1.30,<2', 'opentelemetry-exporter-otlp-proto-http>=1.30,<2']

/** The venv's python, (re)installing when REQUIREMENTS changed since the last install. */
const ensureVenv = () => ensurePythonVenv(VENV, REQUIREMENTS, REQUIREMENTS.join('\n'))

const cleanups: (() => Promise<unknown>)[] = []
let stack: OtelStack
let python: string

beforeAll(async () => {
  ;[python, stack] = await Promise.all([ensureVenv(), startOtelStack(cleanups)])
}, 900_000)
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

it('stores what the Python SDK exports: current and earlier GenAI forms, each message once, analysed', async () => {
  const { apiKey, chatbot } = await createChatbot(stack.pipeline.app, stack.cookie, {
    name: 'Trains',
    settings: { topics: { refunds: ['refund', 'money back'], bikes: ['bike', 'bicycle'] } },
  })
  const exported = await run(python, [SCRIPT], {
    timeoutMs: 120_000,
    env: {
      ...process.env,
      CAS_OTLP_ENDPOINT: `${stack.baseUrl}/v1/traces`,
      CAS_API_KEY: apiKey,
      PYTHONDONTWRITEBYTECODE: '1',
    },
  })
  expect(exported.code, exported.output.slice(-4000)).toBe(0)
  const { traceId, results } = JSON.parse(exported.stdout.trim().split('\n').at(-1)!)
  expect(results).toEqual(Array(7).fill('SUCCESS'))

  const current = await stack.read(chatbot.id, 'python-current', true)
  expect(current.user).toEqual({ id: 'traveller-1' })
  expect(turns(current)).toEqual([
    'system: You are the help desk of a train company.',
    'user: My train was cancelled and nobody told me. This is awful!',
    'assistant: I am sorry. You can get a refund for the ticket.',
    'user: Great, thank you so much for the quick help!',
    'assistant: Glad to help.',
  ])
  const [upset, thanks] = current.messages.filter((m) => m.role === 'user')
  expect(upset!.sentiment!.label).toBe('negative')
  expect(thanks!.sentiment!.label).toBe('positive')
  // "refund" is the assistant's word only: topics come from the end user's messages.
  expect(current.topics).not.toContain('refunds')

  const session = await stack.read(chatbot.id, 'python-session', true)
  expect(session.user).toEqual({ id: 'cyclist-9' })
  expect(turns(session)).toEqual([
    'user: Can I bring my bike on the train?',
    'assistant: Yes, in the bike carriage.',
    'user: Does it cost extra?',
    'assistant: No, bikes travel free.',
  ])
  expect(session.topics).toContain('bikes')

  expect(turns(await stack.read(chatbot.id, traceId, false))).toEqual([
    'system: Answer in one sentence.',
    'user: When does the last train leave?',
    'assistant: At 23:40.',
  ])
}, 300_000)
