import type { ChatbotEvent, ConversationEvent, JsonValue, OrganizationEvent } from '@cas/events'

/** One line of an organization's audit log: who did what, to what, when. */
export interface AuditEntry {
  /** The event it was read from (the first of them for an erasure). */
  readonly eventId: string
  readonly orgId: string
  /** Journal position of that event, as a decimal string: the log's order. */
  readonly position: string
  readonly occurredAt: string
  /** The event type. */
  readonly action: string
  /** The signed-in person whose request committed it (metadata.actorId); null when no one's did. */
  readonly actorId: string | null
  readonly target: { readonly type: AuditTargetType; readonly id: string; readonly name: string | null }
  readonly details: { readonly [key: string]: JsonValue }
}

export type AuditTargetType = 'organization' | 'member' | 'invitation' | 'chatbot'

type AuditedEvent = ChatbotEvent | OrganizationEvent

/**
 * The audit entries of the events one chatbot or organization command committed. `chatbotName` is the
 * chatbot's name before the command (events after creation do not repeat it). The deletion of an
 * organization is not logged: its log goes with it.
 */
export function auditEntriesOf(
  events: readonly AuditedEvent[],
  context: { readonly chatbotName?: string } = {},
): AuditEntry[] {
  const entries: AuditEntry[] = []
  let chatbotName = context.chatbotName ?? null
  for (const event of events) {
    const base = {
      eventId: event.id,
      orgId: event.orgId,
      position: event.position,
      occurredAt: event.occurredAt,
      action: event.type,
      actorId: event.metadata.actorId ?? null,
    }
    switch (event.type) {
      case 'chatbot.created':
        chatbotName = event.payload.name
        entries.push({ ...base, target: chatbot(event, chatbotName), details: {} })
        break
      case 'chatbot.renamed':
        entries.push({
          ...base,
          target: chatbot(event, event.payload.name),
          details: { previousName: chatbotName },
        })
        chatbotName = event.payload.name
        break
      case 'chatbot.settings-changed':
        entries.push({
          ...base,
          target: chatbot(event, chatbotName),
          details: { patch: event.payload.patch as { [key: string]: JsonValue } },
        })
        break
      case 'chatbot.key-rotated':
        entries.push({
          ...base,
          target: chatbot(event, chatbotName),
          details: { apiKeyPrefix: event.payload.apiKeyPrefix },
        })
        break
      case 'chatbot.deleted':
        entries.push({ ...base, target: chatbot(event, chatbotName), details: {} })
        break
      case 'chatbot.topic-rename-requested':
      case 'chatbot.topic-hide-requested':
      case 'chatbot.topic-unhide-requested':
      case 'chatbot.topic-merge-requested':
      case 'chatbot.topic-creation-requested':
      case 'chatbot.reanalysis-requested':
        entries.push({
          ...base,
          target: chatbot(event, chatbotName),
          details: { ...event.payload } as { [key: string]: JsonValue },
        })
        break
      case 'organization.created':
        entries.push({
          ...base,
          target: { type: 'organization', id: event.orgId, name: event.payload.name },
          details: {},
        })
        break
      case 'organization.member-invited':
        entries.push({
          ...base,
          target: { type: 'invitation', id: event.payload.invitationId, name: event.payload.email },
          details: { role: event.payload.role, expiresAt: event.payload.expiresAt },
        })
        break
      case 'organization.invitation-revoked':
        entries.push({
          ...base,
          target: { type: 'invitation', id: event.payload.invitationId, name: event.payload.email },
          details: {},
        })
        break
      case 'organization.member-joined':
        entries.push({
          ...base,
          target: { type: 'member', id: event.payload.userId, name: event.payload.email },
          details: { role: event.payload.role, invitationId: event.payload.invitationId },
        })
        break
      case 'organization.member-role-changed':
        entries.push({
          ...base,
          target: { type: 'member', id: event.payload.userId, name: event.payload.email },
          details: { role: event.payload.role, previousRole: event.payload.previousRole },
        })
        break
      case 'organization.member-removed':
        entries.push({
          ...base,
          target: { type: 'member', id: event.payload.userId, name: event.payload.email },
          details: { role: event.payload.role, reason: event.payload.reason },
        })
        break
      case 'organization.deleted':
        break
      default: {
        const unhandled: never = event
        throw new Error(`unhandled audited event ${JSON.stringify(unhandled)}`)
      }
    }
  }
  return entries
}

/**
 * One entry for an end-user erasure, however many conversations it erased (each got its own
 * conversation.erased event); none when it erased nothing, as it then committed no event. The end user's
 * id is not logged: keeping it would keep what the erasure removed.
 */
export function erasureAuditEntry(
  events: readonly ConversationEvent[],
  chatbot: { readonly id: string; readonly name: string },
): AuditEntry | null {
  const erased = events.filter(
    (e) => e.type === 'conversation.erased' && e.payload.reason === 'end-user-erasure',
  )
  const first = erased[0]
  if (!first) return null
  return {
    eventId: first.id,
    orgId: first.orgId,
    position: first.position,
    occurredAt: first.occurredAt,
    action: first.type,
    actorId: first.metadata.actorId ?? null,
    target: { type: 'chatbot', id: chatbot.id, name: chatbot.name },
    details: { reason: 'end-user-erasure', conversationsErased: erased.length },
  }
}

function chatbot(event: ChatbotEvent, name: string | null) {
  return { type: 'chatbot' as const, id: event.chatbotId, name }
}
