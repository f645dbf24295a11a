/**
 * Issue 33: the official OpenTelemetry SDK for Node.js (@opentelemetry/sdk-trace-node) exports GenAI spans
 * with the official OTLP protobuf exporter (@opentelemetry/exporter-trace-otlp-proto, gzip) to the
 * gateway listening on a port, with a projector and the analysis service running. Spans in the current
 * form (gen_ai.input/output.messages, system instructions, tool calls) and the earlier ones
 * (gen_ai.prompt.N / gen_ai.completion.N, gen_ai.*.message / gen_ai.choice events), and a span that is
 * not GenAI. The conversations read back through the API have the right roles, order and no repeats,
 * and are analysed: sentiment, and topics from the end user's words only.
 */

import { context, type Span, trace } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  NodeTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChatbot } from './support/chatbots.ts'
import { countRows } from './support/journal.ts'
import { type OtelStack, startOtelStack, turns } from './support/otel.ts'

/** @opentelemetry/core's ExportResultCode (a dependency of the SDK's, not of ours). */
const ExportResultCode = { SUCCESS: 0, FAILED: 1 } as const

const cleanups: (() => Promise<unknown>)[] = []
let stack: OtelStack
beforeAll(async () => {
  stack = await startOtelStack(cleanups)
}, 120_000)
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** The exporter's results, so that the test sees each export succeed (the SDK only logs failures). */
class RecordingExporter implements SpanExporter {
  readonly results: { code: number; error?: Error }[] = []
  constructor(private readonly inner: SpanExporter) {}
  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.inner.export(spans, (result) => {
      this.results.push(result)
      done(result)
    })
  }
  shutdown() {
    return this.inner.shutdown()
  }
  forceFlush() {
    return this.inner.forceFlush?.() ?? Promise.resolve()
  }
}

function sdk(apiKey: string) {
  const exporter = new RecordingExporter(
    new OTLPTraceExporter({
      url: `${stack.baseUrl}/v1/traces`,
      headers: { Authorization: `Bearer ${apiKey}` },
      compression: 'gzip' as never,
    }),
  )
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'support-bot' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  })
  return { exporter, provider, tracer: provider.getTracer('support-bot', '1.0.0') }
}

const T0 = Date.now() - 10 * 60_000

describe('the official OpenTelemetry SDK for Node.js, OTLP/protobuf exporter', () => {
  it('sends current-convention chat spans: one conversation, each message once, analysed', async () => {
    const { apiKey, chatbot } = await createChatbot(stack.pipeline.app, stack.cookie, {
      name: 'Umbrella shop',
      settings: { topics: { refunds: ['refund', 'money back'], shipping: ['delivery', 'parcel'] } },
    })
    const { exporter, provider, tracer } = sdk(apiKey)
    const system = JSON.stringify([
      { type: 'text', content: 'You handle delivery and parcel questions for the umbrella shop.' },
    ])
    const user1 = {
      role: 'user',
      parts: [{ type: 'text', content: 'This is terrible. I want my money back for the broken umbrella!' }],
    }
    const assistant1 = {
      role: 'assistant',
      parts: [
        { type: 'text', content: 'I am very sorry. Let me check your order.' },
        { type: 'tool_call', id: 'call_1', name: 'find_order', arguments: { customer: 'u-42' } },
      ],
    }
    const tool1 = {
      role: 'tool',
      parts: [{ type: 'tool_call_response', id: 'call_1', response: 'order 77: umbrella, delivered' }],
    }
    const assistant2 = {
      role: 'assistant',
      parts: [{ type: 'text', content: 'I have started your refund for order 77.' }],
    }
    const user2 = { role: 'user', parts: [{ type: 'text', content: 'Thank you, that is great service.' }] }
    const assistant3 = { role: 'assistant', parts: [{ type: 'text', content: 'You are welcome!' }] }
    const chat = (at: number, input: unknown[], output: unknown[]) => {
      const span = tracer.startSpan('chat gpt-4o', {
        startTime: at,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.conversation.id': 'node-current',
          'user.id': 'u-42',
          'gen_ai.system_instructions': system,
          'gen_ai.input.messages': JSON.stringify(input),
          'gen_ai.output.messages': JSON.stringify(output),
        },
      })
      span.end(at + 800)
    }
    // Three model calls of one chat, each repeating the history before it; a request span around them.
    const request = tracer.startSpan('POST /chat', { startTime: T0, attributes: { 'http.route': '/chat' } })
    context.with(trace.setSpan(context.active(), request), () => {
      chat(T0 + 1_000, [user1], [assistant1])
      chat(T0 + 2_000, [user1, assistant1, tool1], [assistant2])
      chat(T0 + 3_000, [user1, assistant1, tool1, assistant2, user2], [assistant3])
    })
    request.end(T0 + 4_000)
    await provider.forceFlush()
    await provider.shutdown()
    expect(exporter.results.length).toBe(4)
    expect(exporter.results.every((r) => r.code === ExportResultCode.SUCCESS)).toBe(true)

    const conversation = await stack.read(chatbot.id, 'node-current', true)
    expect(conversation.user).toEqual({ id: 'u-42' })
    expect(turns(conversation)).toEqual([
      'system: You handle delivery and parcel questions for the umbrella shop.',
      'user: This is terrible. I want my money back for the broken umbrella!',
      'assistant: I am very sorry. Let me check your order.',
      'tool: find_order({"customer":"u-42"})',
      'tool: order 77: umbrella, delivered',
      'assistant: I have started your refund for order 77.',
      'user: Thank you, that is great service.',
      'assistant: You are welcome!',
    ])
    const [angry, thanks] = conversation.messages.filter((m) => m.role === 'user')
    expect(angry!.sentiment!.label).toBe('negative')
    expect(thanks!.sentiment!.label).toBe('positive')
    // The end user spoke of money back; "delivery" and "parcel" are only in the system prompt and the
    // tool's answer, which make no topics.
    expect(conversation.topics).toContain('refunds')
    expect(conversation.topics).not.toContain('shipping')
  })

  it('sends the earlier forms (gen_ai.prompt.N attributes, gen_ai.*.message events) keyed by session.id and by trace', async () => {
    const { apiKey, chatbot } = await createChatbot(stack.pipeline.app, stack.cookie, {
      name: 'Earlier forms',
    })
    const { exporter, provider, tracer } = sdk(apiKey)
    // OpenLLMetry-style attributes, two turns of one session; the second repeats the first.
    const prompt = (at: number, messages: [string, string][], completion: string) => {
      const attributes: Record<string, string> = { 'gen_ai.system': 'openai', 'session.id': 'node-session' }
      for (const [n, [role, content]] of messages.entries()) {
        attributes[`gen_ai.prompt.${n}.role`] = role
        attributes[`gen_ai.prompt.${n}.content`] = content
      }
      attributes['gen_ai.completion.0.role'] = 'assistant'
      attributes['gen_ai.completion.0.content'] = completion
      attributes['enduser.id'] = 'u-7'
      tracer.startSpan('openai.chat', { startTime: at, attributes }).end(at + 500)
    }
    prompt(
      T0,
      [
        ['system', 'Be brief.'],
        ['user', 'What are your opening hours?'],
      ],
      'Nine to five.',
    )
    prompt(
      T0 + 1_000,
      [
        ['system', 'Be brief.'],
        ['user', 'What are your opening hours?'],
        ['assistant', 'Nine to five.'],
        ['user', 'And on Sunday?'],
      ],
      'Closed on Sunday.',
    )
    // Semantic conventions 1.27-1.36: one event per message; the trace is the conversation.
    let traceId = ''
    tracer.startActiveSpan(
      'chat',
      { startTime: T0 + 2_000, attributes: { 'gen_ai.system': 'openai' } },
      (span: Span) => {
        traceId = span.spanContext().traceId
        span.addEvent('gen_ai.system.message', { content: 'You are a florist.' }, T0 + 2_000)
        span.addEvent('gen_ai.user.message', { content: 'Do you deliver roses?' }, T0 + 2_000)
        span.addEvent(
          'gen_ai.choice',
          {
            index: 0,
            finish_reason: 'stop',
            message: JSON.stringify({ role: 'assistant', content: 'Yes, every day.' }),
          },
          T0 + 2_500,
        )
        span.end(T0 + 2_500)
      },
    )
    await provider.forceFlush()
    await provider.shutdown()
    expect(exporter.results.every((r) => r.code === ExportResultCode.SUCCESS)).toBe(true)

    const session = await stack.read(chatbot.id, 'node-session', false)
    expect(session.user).toEqual({ id: 'u-7' })
    expect(turns(session)).toEqual([
      'system: Be brief.',
      'user: What are your opening hours?',
      'assistant: Nine to five.',
      'user: And on Sunday?',
      'assistant: Closed on Sunday.',
    ])
    expect(turns(await stack.read(chatbot.id, traceId, true))).toEqual([
      'system: You are a florist.',
      'user: Do you deliver roses?',
      'assistant: Yes, every day.',
    ])
  })

  it('fails the export with a wrong key (401), storing nothing', async () => {
    const before = await countRows(stack.pipeline.db.pool, 'capture_conversations')
    const { exporter, provider, tracer } = sdk('svc_live_0000000000000000000000000000000000000000')
    tracer.startSpan('chat', { attributes: { 'gen_ai.prompt.0.content': 'hello' } }).end()
    // The span processor may pass the failed export on to forceFlush: the exporter's result says it.
    await provider.forceFlush().catch(() => {})
    await provider.shutdown().catch(() => {})
    expect(exporter.results).toHaveLength(1)
    expect(exporter.results[0]!.code).toBe(ExportResultCode.FAILED)
    expect(exporter.results[0]!.error?.message).toBe('Unauthorized')
    expect(await countRows(stack.pipeline.db.pool, 'capture_conversations')).toBe(before)
  })
})
