import { describe, expect, it } from 'vitest'
import { descriptorJson } from '../../scripts/generate-otlp-descriptor.ts'
import { OTLP_DESCRIPTOR } from './descriptor.ts'
import { isGenAiSpan, mapSpan, messageIds } from './genai.ts'
import type { Attributes, Span } from './spans.ts'

const span = (attributes: Attributes, extra: Partial<Span> = {}): Span => ({
  traceId: 'aa'.repeat(16),
  spanId: 'bb'.repeat(8),
  name: 'chat',
  startMs: 1_000,
  endMs: 2_000,
  attributes,
  resource: {},
  events: [],
  ...extra,
})

const turns = (s: Span) => mapSpan(s).messages.map((m) => `${m.role}: ${m.content}`)

describe('the GenAI mapping', () => {
  it('takes the conversation from gen_ai.conversation.id, else session.id, else the trace', () => {
    const base = { 'gen_ai.prompt.0.content': 'hi' }
    expect(mapSpan(span({ ...base, 'gen_ai.conversation.id': 'c', 'session.id': 's' })).conversationId).toBe(
      'c',
    )
    expect(mapSpan(span({ ...base, 'session.id': 's' })).conversationId).toBe('s')
    expect(mapSpan(span(base, { resource: { 'session.id': 'r' } })).conversationId).toBe('r')
    expect(mapSpan(span(base)).conversationId).toBe('aa'.repeat(16))
    expect(mapSpan(span({ ...base, 'enduser.id': 'e' })).userId).toBe('e')
    expect(mapSpan(span({ ...base, 'user.id': 'u', 'enduser.id': 'e' })).userId).toBe('u')
  })

  it('reads one form only: a span with the current attributes and the earlier events stores each message once', () => {
    const s = span(
      {
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }]),
      },
      { events: [{ name: 'gen_ai.user.message', timeMs: 1_000, attributes: { content: 'hi' } }] },
    )
    expect(turns(s)).toEqual(['user: hi'])
  })

  it('keeps user text that looks like JSON as text', () => {
    const s = span({ 'gen_ai.prompt.0.role': 'user', 'gen_ai.prompt.0.content': '{"a": 1}' })
    expect(turns(s)).toEqual(['user: {"a": 1}'])
  })

  it('stores tool calls and results as tool messages, maps developer to system, drops other roles', () => {
    const s = span({
      'gen_ai.input.messages': JSON.stringify([
        { role: 'developer', content: 'Be kind.' },
        { role: 'critic', content: 'meh' },
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: '1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: 'tool', content: 'rain' },
      ]),
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', parts: [{ type: 'reasoning', content: 'x' }] },
      ]),
    })
    expect(turns(s)).toEqual([
      'system: Be kind.',
      'user: Weather?',
      'tool: weather({"city":"Oslo"})',
      'tool: rain',
    ])
    expect(mapSpan(s).droppedRoles).toEqual(['critic'])
  })

  it('reads the Vercel AI SDK provider span', () => {
    const s = span({
      'ai.prompt.messages': JSON.stringify([
        { role: 'system', content: 'Short answers.' },
        { role: 'user', content: [{ type: 'text', text: 'Capital of France?' }] },
      ]),
      'ai.response.text': 'Paris.',
    })
    expect(isGenAiSpan(s)).toBe(true)
    expect(turns(s)).toEqual(['system: Short answers.', 'user: Capital of France?', 'assistant: Paris.'])
  })

  it('gives a message the same id whatever history comes before it, and a repeat its own', () => {
    const m = (role: 'user' | 'assistant', content: string) => ({ role, content, atMs: null })
    const [a, b, c] = messageIds('conv', [m('user', 'yes'), m('assistant', 'ok'), m('user', 'yes')])
    expect(new Set([a, b, c]).size).toBe(3)
    const [, again] = messageIds('conv', [m('user', 'Be kind'), m('user', 'yes')])
    expect(again).toBe(a)
    expect(messageIds('other', [m('user', 'yes')])[0]).not.toBe(a)
  })

  it('ignores spans that are not GenAI', () => {
    expect(isGenAiSpan(span({ 'http.route': '/' }))).toBe(false)
  })
})

describe('the vendored OTLP .proto files', () => {
  it('are what descriptor.ts holds (npm run otlp:proto)', () => {
    expect(OTLP_DESCRIPTOR).toEqual(descriptorJson())
  })
})
