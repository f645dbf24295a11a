import { type ChatbotEvent, type JsonValue, type NewEvent, newEvent } from '@cas/events'
import { settingsSchema } from '@cas/settings'
import { applyMergePatch } from './merge-patch.ts'

type JsonObject = { [key: string]: JsonValue }

/** A chatbot's state as its stream's events leave it. */
export type ChatbotState =
  | { readonly status: 'absent' }
  | {
      readonly status: 'active'
      readonly orgId: string
      readonly name: string
      readonly settings: JsonObject
      readonly apiKeyPrefix: string
      readonly createdAt: string
    }
  | { readonly status: 'deleted'; readonly orgId: string }

export type ChatbotCommand =
  | {
      readonly type: 'create'
      readonly name: string
      readonly settings: JsonObject
      readonly apiKeyPrefix: string
    }
  | { readonly type: 'update'; readonly name?: string; readonly settingsPatch?: JsonObject }
  | { readonly type: 'rotate-key'; readonly apiKeyPrefix: string }
  | { readonly type: 'delete' }

export type Decision =
  | { readonly ok: true; readonly events: readonly NewEvent<ChatbotEvent['type']>[] }
  | { readonly ok: false; readonly reason: 'not_found' | 'already_exists' }
  | { readonly ok: false; readonly reason: 'invalid_settings'; readonly issues: readonly SettingsIssue[] }

export interface SettingsIssue {
  readonly path: string
  readonly message: string
}

export const initialChatbotState: ChatbotState = { status: 'absent' }

/**
 * Decides which events a command produces against the current state, for a caller in `orgId`. Another
 * organization's chatbot is indistinguishable from one that does not exist.
 */
export function decide(command: ChatbotCommand, state: ChatbotState, orgId: string): Decision {
  if (command.type === 'create') {
    if (state.status !== 'absent') return { ok: false, reason: 'already_exists' }
    const { name, settings, apiKeyPrefix } = command
    return { ok: true, events: [newEvent('chatbot.created', { name, settings, apiKeyPrefix })] }
  }
  if (state.status !== 'active' || state.orgId !== orgId) return { ok: false, reason: 'not_found' }
  switch (command.type) {
    case 'update': {
      const events: NewEvent<ChatbotEvent['type']>[] = []
      if (command.name !== undefined && command.name !== state.name) {
        events.push(newEvent('chatbot.renamed', { name: command.name }))
      }
      if (command.settingsPatch !== undefined) {
        const settings = applyMergePatch(state.settings, command.settingsPatch) as JsonObject
        const valid = settingsSchema.safeParse(settings)
        if (!valid.success) {
          const issues = valid.error.issues.map((i) => ({
            path: `/settings/${i.path.join('/')}`,
            message: i.message,
          }))
          return { ok: false, reason: 'invalid_settings', issues }
        }
        if (JSON.stringify(settings) !== JSON.stringify(state.settings)) {
          events.push(newEvent('chatbot.settings-changed', { patch: command.settingsPatch, settings }))
        }
      }
      return { ok: true, events }
    }
    case 'rotate-key':
      return { ok: true, events: [newEvent('chatbot.key-rotated', { apiKeyPrefix: command.apiKeyPrefix })] }
    case 'delete':
      return { ok: true, events: [newEvent('chatbot.deleted', {})] }
    default: {
      const unhandled: never = command
      throw new Error(`unhandled chatbot command ${JSON.stringify(unhandled)}`)
    }
  }
}

/** Folds one event into the state. */
export function evolve(state: ChatbotState, event: ChatbotEvent): ChatbotState {
  switch (event.type) {
    case 'chatbot.created':
      return {
        status: 'active',
        orgId: event.orgId,
        name: event.payload.name,
        settings: event.payload.settings as JsonObject,
        apiKeyPrefix: event.payload.apiKeyPrefix,
        createdAt: event.occurredAt,
      }
    case 'chatbot.renamed':
      return state.status === 'active' ? { ...state, name: event.payload.name } : state
    case 'chatbot.settings-changed':
      return state.status === 'active' ? { ...state, settings: event.payload.settings as JsonObject } : state
    case 'chatbot.key-rotated':
      return state.status === 'active' ? { ...state, apiKeyPrefix: event.payload.apiKeyPrefix } : state
    // Commands on the chatbot's topics: the analysis service applies them (topics/commands.ts).
    case 'chatbot.topic-rename-requested':
    case 'chatbot.topic-hide-requested':
    case 'chatbot.topic-unhide-requested':
    case 'chatbot.topic-merge-requested':
    case 'chatbot.topic-creation-requested':
    case 'chatbot.reanalysis-requested':
      return state
    case 'chatbot.deleted':
      return { status: 'deleted', orgId: event.orgId }
    default: {
      const unhandled: never = event
      throw new Error(`unhandled chatbot event ${JSON.stringify(unhandled)}`)
    }
  }
}
