import { createHash } from 'node:crypto'
import type { Attributes, AttributeValue, Span } from './spans.ts'

/**
 * The OpenTelemetry GenAI semantic conventions mapped onto conversations and messages (docs/opentelemetry.md
 * has the table). Pure: a span in, the conversation it belongs to and the messages it
 * carries out. Each span is read in the first of these forms it has (one form only: instrumentations in
 * transition emit two, and reading both would store each message twice):
 * 1. current: `gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.output.messages`, on the
 *    span or on its `gen_ai.client.inference.operation.details` event, structured or as JSON strings;
 * 2. earlier attributes: `gen_ai.prompt.N.role` / `.content` / `.tool_calls.M.*`, `gen_ai.completion.N.*`;
 * 3. earlier events: `gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`,
 *    `gen_ai.tool.message`, `gen_ai.choice`, and `gen_ai.content.prompt` / `gen_ai.content.completion`;
 * 4. the Vercel AI SDK's own: `ai.prompt.messages` and `ai.response.text` / `ai.response.toolCalls`.
 */

export type Role = 'user' | 'assistant' | 'system' | 'tool'

export interface MappedMessage {
  readonly role: Role
  readonly content: string
  /** When it was said (Unix ms): the span's start for its input, its end for its output; null: unknown. */
  readonly atMs: number | null
}

export interface MappedSpan {
  /** gen_ai.conversation.id, else session.id, else the trace id. */
  readonly conversationId: string
  readonly userId: string | undefined
  /** Its messages in order, the history it repeats included. */
  readonly messages: readonly MappedMessage[]
  /** Messages of roles that are not a conversation's (dropped), by role. */
  readonly droppedRoles: readonly string[]
}

const ROLES: Record<string, Role> = {
  user: 'user',
  human: 'user',
  assistant: 'assistant',
  model: 'assistant',
  ai: 'assistant',
  system: 'system',
  developer: 'system',
  tool: 'tool',
  function: 'tool',
  ipython: 'tool',
}

/** Whether a span is a GenAI one (anything else is acknowledged and ignored). */
export function isGenAiSpan(span: Span): boolean {
  for (const key of Object.keys(span.attributes)) {
    if (key.startsWith('gen_ai.') || key === 'ai.prompt.messages') return true
  }
  return span.events.some((e) => e.name.startsWith('gen_ai.'))
}

/** The conversation and messages of a GenAI span. */
export function mapSpan(span: Span): MappedSpan {
  const attrs = span.attributes
  const conversationId =
    text(attrs['gen_ai.conversation.id']) ??
    text(attrs['ai.telemetry.metadata.conversationId']) ??
    text(attrs['session.id']) ??
    text(attrs['ai.telemetry.metadata.sessionId']) ??
    text(span.resource['session.id']) ??
    span.traceId
  const userId =
    text(attrs['user.id']) ??
    text(attrs['enduser.id']) ??
    text(attrs['ai.telemetry.metadata.userId']) ??
    text(span.resource['user.id']) ??
    text(span.resource['enduser.id'])
  const dropped: string[] = []
  const messages =
    currentForm(span, dropped) ??
    promptAttributes(span, dropped) ??
    eventForm(span, dropped) ??
    vercelForm(span, dropped) ??
    []
  return { conversationId, userId, messages, droppedRoles: dropped }
}

/** A non-empty string attribute (numbers too: ids are sometimes sent as integers), else undefined. */
function text(value: AttributeValue | undefined): string | undefined {
  if (typeof value === 'string') return value.length > 0 ? value : undefined
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return undefined
}

/** A value that may be sent as a JSON string (most instrumentations) or structured (AnyValue lists). */
function structured(value: AttributeValue | undefined): AttributeValue | undefined {
  if (typeof value !== 'string') return value
  const trimmed = value.trim()
  if (!trimmed.startsWith('[') && !trimmed.startsWith('{')) return value
  try {
    return JSON.parse(trimmed) as AttributeValue
  } catch {
    return value
  }
}

type Obj = { [key: string]: AttributeValue }
const isObj = (v: AttributeValue | undefined): v is Obj =>
  v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v)

/** A value as text: strings as they are, anything else as JSON. */
function asText(value: AttributeValue | undefined): string {
  if (value === undefined || value === null) return ''
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value)
  } catch {
    // Nested too deep for the stack (arguments of a JSON string sent to hurt): left out.
    return ''
  }
}

/** `get_weather({"city":"Paris"})`: how a tool call is stored. */
function toolCall(name: AttributeValue | undefined, args: AttributeValue | undefined): string {
  const a = args === undefined || args === null ? '' : asText(structured(args))
  return `${asText(name) || 'tool'}(${a})`
}

/**
 * One message of any of the shapes in use (GenAI `parts`, OpenAI `content` + `tool_calls`, the Vercel AI
 * SDK's content parts) as the stored messages it makes: its text with its role, each tool call as a
 * `tool` message, each tool result as a `tool` message. Reasoning and media parts are left out.
 */
function messagesOf(roleName: string, message: Obj, atMs: number | null, dropped: string[]): MappedMessage[] {
  const role = ROLES[roleName.toLowerCase()]
  if (!role) {
    dropped.push(roleName || '(none)')
    return []
  }
  const texts: string[] = []
  const tools: string[] = []
  const parts = message.parts !== undefined ? structured(message.parts) : contentParts(message.content)
  const readPart = (part: AttributeValue) => {
    if (typeof part === 'string') return void texts.push(part)
    if (!isObj(part)) return
    const type = asText(part.type)
    if (
      type === 'text' ||
      type === 'input_text' ||
      type === 'output_text' ||
      (!type && part.text !== undefined)
    ) {
      texts.push(asText(part.content ?? part.text))
    } else if (type === 'tool_call' || type === 'tool-call' || type === 'function_call') {
      tools.push(toolCall(part.name ?? part.toolName, part.arguments ?? part.args ?? part.input))
    } else if (type === 'tool_call_response' || type === 'tool-result' || type === 'function_call_output') {
      tools.push(asText(structured(part.response ?? part.result ?? part.output ?? part.content)))
    }
  }
  if (Array.isArray(parts)) for (const part of parts) readPart(part)
  else if (parts !== undefined && parts !== null) readPart(parts)
  for (const call of arrayOf(structured(message.tool_calls))) {
    if (!isObj(call)) continue
    const fn = isObj(call.function) ? call.function : call
    tools.push(toolCall(fn.name, fn.arguments))
  }
  const out: MappedMessage[] = []
  const joined = texts.filter((t) => t.length > 0).join('\n')
  if (role === 'tool') {
    const all = [joined, ...tools].filter((t) => t.length > 0)
    if (all.length > 0) out.push({ role: 'tool', content: all.join('\n'), atMs })
    return out
  }
  if (joined.length > 0) out.push({ role, content: joined, atMs })
  for (const t of tools) out.push({ role: 'tool', content: t, atMs })
  return out
}

/**
 * A message's `content`: text, or a list of parts (structured, or as a JSON string: OpenLLMetry writes
 * multimodal content so). A string is taken as parts only when it is a JSON array of typed objects: an
 * end user may well type JSON.
 */
function contentParts(content: AttributeValue | undefined): AttributeValue | undefined {
  if (typeof content !== 'string') return content
  const parsed = structured(content)
  return Array.isArray(parsed) &&
    parsed.length > 0 &&
    parsed.every((p) => isObj(p) && typeof p.type === 'string')
    ? parsed
    : content
}

const arrayOf = (value: AttributeValue | undefined): AttributeValue[] =>
  Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]

/** The messages of a list of them (each `{ role, parts }` or `{ role, content }`). */
function messageList(
  value: AttributeValue | undefined,
  atMs: number | null,
  dropped: string[],
  defaultRole = 'user',
): MappedMessage[] {
  const out: MappedMessage[] = []
  for (const m of arrayOf(structured(value))) {
    if (typeof m === 'string') out.push({ role: defaultRole as Role, content: m, atMs })
    else if (isObj(m)) {
      const inner = isObj(m.message) ? m.message : m
      out.push(...messagesOf(asText(inner.role) || defaultRole, inner, atMs, dropped))
    }
  }
  return out
}

const DETAILS_EVENT = 'gen_ai.client.inference.operation.details'

function currentForm(span: Span, dropped: string[]): MappedMessage[] | null {
  const sources: Attributes[] = [span.attributes]
  for (const e of span.events) if (e.name === DETAILS_EVENT) sources.push(e.attributes)
  for (const attrs of sources) {
    const input = attrs['gen_ai.input.messages']
    const output = attrs['gen_ai.output.messages']
    const system = attrs['gen_ai.system_instructions']
    if (input === undefined && output === undefined && system === undefined) continue
    const out: MappedMessage[] = []
    if (system !== undefined) {
      out.push(...messagesOf('system', { parts: structured(system) ?? null }, span.startMs, dropped))
    }
    out.push(...messageList(input, span.startMs, dropped))
    out.push(...messageList(output, span.endMs ?? span.startMs, dropped, 'assistant'))
    return out
  }
  return null
}

/** `gen_ai.prompt.N.*` and `gen_ai.completion.N.*` (OpenLLMetry and the semantic conventions up to 1.26). */
function promptAttributes(span: Span, dropped: string[]): MappedMessage[] | null {
  const out: MappedMessage[] = []
  let found = false
  for (const [prefix, atMs, defaultRole] of [
    ['gen_ai.prompt', span.startMs, 'user'],
    ['gen_ai.completion', span.endMs ?? span.startMs, 'assistant'],
  ] as const) {
    const byIndex = new Map<number, Obj>()
    const pattern = new RegExp(`^${prefix.replace('.', '\\.')}\\.(\\d+)\\.(.+)$`)
    for (const [key, value] of Object.entries(span.attributes)) {
      const match = key.match(pattern)
      if (!match) continue
      const n = Number(match[1])
      const message = byIndex.get(n) ?? (Object.create(null) as Obj)
      byIndex.set(n, message)
      const path = match[2]!
      const call = path.match(/^tool_calls\.(\d+)\.(name|arguments)$/)
      if (call) {
        if (!Array.isArray(message.tool_calls)) message.tool_calls = []
        const calls = message.tool_calls
        const m = Number(call[1])
        if (!isObj(calls[m])) calls[m] = Object.create(null) as Obj
        ;(calls[m] as Obj)[call[2]!] = value
      } else message[path] = value
    }
    if (byIndex.size === 0) continue
    found = true
    for (const n of [...byIndex.keys()].sort((a, b) => a - b)) {
      const message = byIndex.get(n)!
      if (Array.isArray(message.tool_calls)) message.tool_calls = message.tool_calls.filter((c) => c)
      out.push(...messagesOf(asText(message.role) || defaultRole, message, atMs, dropped))
    }
  }
  return found ? out : null
}

const EVENT_ROLES: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
}

/** The per-message span events of the semantic conventions 1.27 to 1.36, and the 1.26 content events. */
function eventForm(span: Span, dropped: string[]): MappedMessage[] | null {
  const out: MappedMessage[] = []
  let found = false
  for (const event of span.events) {
    const atMs = event.timeMs ?? span.startMs
    const attrs = event.attributes
    const body = isObj(structured(attrs['gen_ai.event.content']))
      ? (structured(attrs['gen_ai.event.content']) as Obj)
      : undefined
    const fields: Obj = { ...(body ?? {}), ...attrs }
    const role = EVENT_ROLES[event.name]
    if (role) {
      found = true
      out.push(...messagesOf(asText(fields.role) || role, fields, atMs, dropped))
    } else if (event.name === 'gen_ai.choice') {
      found = true
      const message = structured(fields.message)
      const m: Obj = isObj(message)
        ? message
        : {
            content: fields['message.content'] ?? fields.content ?? null,
            tool_calls: fields.tool_calls ?? null,
          }
      out.push(...messagesOf(asText(m.role ?? fields['message.role']) || 'assistant', m, atMs, dropped))
    } else if (event.name === 'gen_ai.content.prompt') {
      found = true
      out.push(...messageList(attrs['gen_ai.prompt'], atMs, dropped))
    } else if (event.name === 'gen_ai.content.completion') {
      found = true
      out.push(...messageList(attrs['gen_ai.completion'], atMs, dropped, 'assistant'))
    }
  }
  return found ? out : null
}

/** The Vercel AI SDK (experimental_telemetry): its provider-call spans carry the prompt and the answer. */
function vercelForm(span: Span, dropped: string[]): MappedMessage[] | null {
  const prompt = span.attributes['ai.prompt.messages']
  if (prompt === undefined) return null
  const out = messageList(prompt, span.startMs, dropped)
  const atMs = span.endMs ?? span.startMs
  const answer = text(span.attributes['ai.response.text'])
  if (answer) out.push({ role: 'assistant', content: answer, atMs })
  for (const call of arrayOf(structured(span.attributes['ai.response.toolCalls']))) {
    if (isObj(call)) {
      out.push({ role: 'tool', content: toolCall(call.toolName, call.args ?? call.input), atMs })
    }
  }
  return out
}

/**
 * The message id a message gets within its conversation: a hash of the conversation id, the role, the
 * text and how many messages of that role and text came before it in the span. A span that repeats the
 * history before it gives each earlier message the id it had, so capture stores it once; counting
 * repeats (rather than positions) keeps the ids when a span leaves part of the history out (a system
 * prompt sent apart, a history cut to its last N turns).
 */
export function messageIds(conversationId: string, messages: readonly MappedMessage[]): string[] {
  const seen = new Map<string, number>()
  return messages.map((m) => {
    const key = `${m.role}\u0000${m.content}`
    const n = seen.get(key) ?? 0
    seen.set(key, n + 1)
    const hash = createHash('sha256')
      .update(`${conversationId}\u0000${m.role}\u0000${m.content}\u0000${n}`)
      .digest('hex')
    return `otel-${hash.slice(0, 32)}`
  })
}
