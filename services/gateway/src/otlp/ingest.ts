import { findIllFormedText } from '@cas/http'
import { type CaptureBody, captureBodySchema, MAX_USER_ID_LENGTH } from '../capture/schema.ts'
import { OtlpFormatError } from './codec.ts'
import { isGenAiSpan, type MappedMessage, mapSpan, messageIds } from './genai.ts'
import type { Span } from './spans.ts'

/**
 * The spans of one OTLP request as capture requests: one body per conversation (its spans in the order
 * they started, each message once by its deterministic id), cut into bodies of at most 100 messages,
 * each checked by capture's own schema. The capture command path then stores them as if they had come
 * to POST /api/v1/capture, with its idempotency by message id and its `messagesStored`.
 */

/** Capture's limits (schema.ts), checked per span so that one bad span is rejected alone. */
const MAX_CONVERSATION_ID = 256
const MAX_CONTENT = 32_768
const MAX_MESSAGES_PER_BODY = 100

export interface IngestPlan {
  /** Capture bodies, grouped by conversation: a conversation's bodies are to be captured in order. */
  readonly conversations: readonly (readonly CaptureBody[])[]
  /** Spans refused, with why (OTLP partial success: rejected_spans and error_message). */
  readonly rejected: readonly string[]
  /** What was taken differently from how it was sent (said in error_message, rejected_spans 0). */
  readonly warnings: readonly string[]
  /** GenAI spans seen (the others are acknowledged and ignored). */
  readonly genAiSpans: number
}

export function planIngest(spans: readonly Span[]): IngestPlan {
  const rejected: string[] = []
  const warnings: string[] = []
  const droppedRoles = new Set<string>()
  let withoutContent = 0
  let genAiSpans = 0
  const byConversation = new Map<
    string,
    { userId?: string; spans: { startMs: number; messages: MappedMessage[] }[] }
  >()
  for (const span of spans) {
    if (!isGenAiSpan(span)) continue
    genAiSpans++
    const mapped = mapSpan(span)
    for (const role of mapped.droppedRoles) droppedRoles.add(role)
    const fault = spanFault(mapped.conversationId, mapped.messages)
    if (fault) {
      rejected.push(`span ${span.spanId || '(no id)'}: ${fault}`)
      continue
    }
    if (mapped.messages.length === 0) {
      withoutContent++
      continue
    }
    let userId = mapped.userId
    if (userId !== undefined && (userId.length > MAX_USER_ID_LENGTH || findIllFormedText(userId))) {
      warnings.push(
        `span ${span.spanId}: user.id is longer than ${MAX_USER_ID_LENGTH} characters or not well-formed text; it was left out`,
      )
      userId = undefined
    }
    const conversation = byConversation.get(mapped.conversationId) ?? { spans: [] }
    byConversation.set(mapped.conversationId, conversation)
    if (userId !== undefined) conversation.userId = userId
    conversation.spans.push({ startMs: span.startMs ?? 0, messages: [...mapped.messages] })
  }
  if (withoutContent > 0) {
    warnings.push(
      `${withoutContent} GenAI span(s) carried no message content and stored nothing: turn on your ` +
        "instrumentation's content capture (e.g. OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)",
    )
  }
  if (droppedRoles.size > 0) {
    warnings.push(
      `messages of role ${[...droppedRoles].join(', ')} are not stored (roles kept: user, assistant, system, tool)`,
    )
  }

  const conversations: CaptureBody[][] = []
  for (const [conversationId, conversation] of byConversation) {
    // Spans in the order they started (a batch holds them in the order they ended); the first of an id
    // wins, with the time it was first said.
    const ordered = conversation.spans.sort((a, b) => a.startMs - b.startMs)
    const messages = new Map<string, CaptureBody['messages'][number]>()
    for (const span of ordered) {
      const ids = messageIds(conversationId, span.messages)
      for (const [n, m] of span.messages.entries()) {
        const id = ids[n]!
        if (messages.has(id)) continue
        messages.set(id, {
          id,
          role: m.role,
          content: m.content,
          ...(m.atMs !== null ? { sentAt: new Date(m.atMs).toISOString() } : {}),
        })
      }
    }
    const all = [...messages.values()]
    const bodies: CaptureBody[] = []
    for (let start = 0; start < all.length; start += MAX_MESSAGES_PER_BODY) {
      const parsed = captureBodySchema.safeParse({
        conversationId,
        messages: all.slice(start, start + MAX_MESSAGES_PER_BODY),
        ...(conversation.userId !== undefined ? { user: { id: conversation.userId } } : {}),
      })
      // The checks above make capture's schema hold; should one be missed, a 400 rather than a 500.
      if (!parsed.success) {
        throw new OtlpFormatError(
          `conversation ${conversationId} cannot be captured: ${parsed.error.issues[0]?.message}`,
        )
      }
      bodies.push(parsed.data)
    }
    conversations.push(bodies)
  }
  return { conversations, rejected, warnings, genAiSpans }
}

/** Why a span's conversation cannot be stored as capture would take it, or undefined. */
function spanFault(conversationId: string, messages: readonly MappedMessage[]): string | undefined {
  if (conversationId.length === 0)
    return 'no conversation id (gen_ai.conversation.id, session.id) and no trace id'
  if (conversationId.length > MAX_CONVERSATION_ID) {
    return `the conversation id is longer than ${MAX_CONVERSATION_ID} characters`
  }
  if (findIllFormedText(conversationId)) {
    return 'the conversation id holds U+0000 or a lone UTF-16 surrogate'
  }
  for (const m of messages) {
    if (m.content.length > MAX_CONTENT) {
      return `a ${m.role} message is longer than ${MAX_CONTENT.toLocaleString('en')} characters`
    }
    if (findIllFormedText(m.content)) return `a ${m.role} message holds U+0000 or a lone UTF-16 surrogate`
  }
  return undefined
}
