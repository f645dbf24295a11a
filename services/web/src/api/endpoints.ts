import { request } from './client.ts'
import type {
  Account,
  AuditPage,
  CaptureResult,
  Chatbot,
  ChatbotAnalyzers,
  ChatbotWithKey,
  ConversationDetail,
  ConversationPage,
  Interval,
  Invitation,
  InvitationPreview,
  Invited,
  Member,
  Overview,
  PipelineStatus,
  Reanalysis,
  Role,
  SentimentTrend,
  SignalsReport,
  TopicCommandAnswer,
  TopicCommandEntry,
  TopicsReport,
} from './types.ts'

export const auth = {
  me: () => request<Account>('GET', '/api/v1/auth/me', { quietUnauthorized: true }),
  signUp: (body: { email: string; password: string; name?: string; organizationName: string }) =>
    request<Account>('POST', '/api/v1/auth/signup', { body, quietUnauthorized: true }),
  signIn: (body: { email: string; password: string }) =>
    request<Account>('POST', '/api/v1/auth/login', { body, quietUnauthorized: true }),
  signOut: () => request<{ ok: true }>('POST', '/api/v1/auth/logout', { quietUnauthorized: true }),
  switchOrganization: (organizationId: string) =>
    request<Account>('PUT', '/api/v1/auth/organization', { body: { organizationId } }),
}

export const organizations = {
  create: (name: string) => request<Account>('POST', '/api/v1/organizations', { body: { name } }),
  leave: () => request<Account>('POST', '/api/v1/organization/leave'),
  remove: () => request<Account>('DELETE', '/api/v1/organization'),
}

export const members = {
  list: (signal?: AbortSignal) =>
    request<{ members: Member[] }>('GET', '/api/v1/members', { signal }).then((r) => r.members),
  setRole: (userId: string, role: Role) =>
    request<{ member: Member }>('PATCH', `/api/v1/members/${encodeURIComponent(userId)}`, { body: { role } }),
  remove: (userId: string) =>
    request<{ ok: true }>('DELETE', `/api/v1/members/${encodeURIComponent(userId)}`),
}

export const invitations = {
  list: (signal?: AbortSignal) =>
    request<{ invitations: Invitation[] }>('GET', '/api/v1/invitations', { signal }).then(
      (r) => r.invitations,
    ),
  create: (email: string, role: Role) =>
    request<Invited>('POST', '/api/v1/invitations', { body: { email, role } }),
  revoke: (id: string) => request<{ ok: true }>('DELETE', `/api/v1/invitations/${encodeURIComponent(id)}`),
  lookup: (token: string) =>
    request<{ invitation: InvitationPreview }>('POST', '/api/v1/invitations/lookup', {
      body: { token },
      quietUnauthorized: true,
    }).then((r) => r.invitation),
  /** Signed in: joins as that person. Signed out: signs up with the invitation's email and `password`. */
  accept: (body: { token: string; password?: string; name?: string }) =>
    request<Account>('POST', '/api/v1/invitations/accept', { body, quietUnauthorized: true }),
}

export const audit = {
  list: (cursor: string | undefined, signal?: AbortSignal) =>
    request<AuditPage>('GET', '/api/v1/audit', { query: { limit: 50, cursor }, signal }),
}

export const chatbots = {
  list: (signal?: AbortSignal) => request<Chatbot[]>('GET', '/api/v1/chatbots', { signal }),
  get: (id: string, signal?: AbortSignal) =>
    request<Chatbot>('GET', `/api/v1/chatbots/${encodeURIComponent(id)}`, { signal }),
  create: (name: string) => request<ChatbotWithKey>('POST', '/api/v1/chatbots', { body: { name } }),
  /** `settings` is a JSON Merge Patch: objects merge, null removes a key. */
  update: (id: string, body: { name?: string; settings?: Record<string, unknown> }) =>
    request<Chatbot>('PATCH', `/api/v1/chatbots/${encodeURIComponent(id)}`, { body }),
  rotateKey: (id: string) =>
    request<ChatbotWithKey>('POST', `/api/v1/chatbots/${encodeURIComponent(id)}/rotate-key`),
  remove: (id: string) => request<{ ok: true }>('DELETE', `/api/v1/chatbots/${encodeURIComponent(id)}`),
  /** Captures the onboarding's example conversation with the chatbot's key, which the page need not have. */
  sendTestConversation: (id: string) =>
    request<CaptureResult>('POST', `/api/v1/chatbots/${encodeURIComponent(id)}/test-conversation`),
}

export type ConversationQuery = Record<string, string | number | undefined>

export const conversations = {
  list: (query: ConversationQuery, signal?: AbortSignal) =>
    request<ConversationPage>('GET', '/api/v1/conversations', { query, signal }),
  get: (id: string, signal?: AbortSignal) =>
    request<{ conversation: ConversationDetail }>('GET', `/api/v1/conversations/${encodeURIComponent(id)}`, {
      signal,
    }).then((r) => r.conversation),
}

export interface AnalyticsQuery {
  chatbotId?: string
  days?: number
  from?: string
  to?: string
  tz?: string
  [key: string]: string | number | undefined
}

const topicUrl = (chatbotId: string, topicId: string, command: string) =>
  `/api/v1/chatbots/${encodeURIComponent(chatbotId)}/topics/${encodeURIComponent(topicId)}/${command}`

/** Owners and admins manage a chatbot's topics (each command is an event). */
export const topics = {
  create: (chatbotId: string, label: string, examples: readonly string[]) =>
    request<TopicCommandAnswer>('POST', `/api/v1/chatbots/${encodeURIComponent(chatbotId)}/topics`, {
      body: { label, examples },
    }),
  rename: (chatbotId: string, topicId: string, label: string) =>
    request<TopicCommandAnswer>('POST', topicUrl(chatbotId, topicId, 'rename'), {
      body: { label },
    }),
  hide: (chatbotId: string, topicId: string) =>
    request<TopicCommandAnswer>('POST', topicUrl(chatbotId, topicId, 'hide')),
  unhide: (chatbotId: string, topicId: string) =>
    request<TopicCommandAnswer>('POST', topicUrl(chatbotId, topicId, 'unhide')),
  merge: (chatbotId: string, topicId: string, into: string) =>
    request<TopicCommandAnswer>('POST', topicUrl(chatbotId, topicId, 'merge'), {
      body: { into },
    }),
  /** The chatbot's latest commands (50), newest first, with what became of each. */
  commands: (chatbotId: string, signal?: AbortSignal) =>
    request<{ commands: TopicCommandEntry[] }>(
      'GET',
      `/api/v1/chatbots/${encodeURIComponent(chatbotId)}/topics/commands`,
      { signal },
    ).then((r) => r.commands),
}

/** Re-analysing a chatbot's past messages with the current analyzer (owners and admins), and its progress. */
export const reanalysis = {
  start: (chatbotId: string) =>
    request<{ ok: true; reanalysisId: string }>(
      'POST',
      `/api/v1/chatbots/${encodeURIComponent(chatbotId)}/reanalysis`,
      { body: {} },
    ),
  latest: (chatbotId: string, signal?: AbortSignal) =>
    request<{ reanalysis: Reanalysis }>(
      'GET',
      `/api/v1/chatbots/${encodeURIComponent(chatbotId)}/reanalysis`,
      {
        signal,
      },
    ).then((r) => r.reanalysis),
  /** Which analyzers read the chatbot's messages, and how many an earlier one did (`outdated`). */
  analyzers: (chatbotId: string, signal?: AbortSignal) =>
    request<ChatbotAnalyzers>('GET', `/api/v1/chatbots/${encodeURIComponent(chatbotId)}/analyzers`, {
      signal,
    }),
}

export const analytics = {
  overview: (query: AnalyticsQuery, signal?: AbortSignal) =>
    request<Overview>('GET', '/api/v1/analytics/overview', { query, signal }),
  sentiment: (query: AnalyticsQuery & { interval: Interval }, signal?: AbortSignal) =>
    request<SentimentTrend>('GET', '/api/v1/analytics/sentiment', { query, signal }),
  /** What end users talk about: `limit` topics at most (1..1000, default 20), and "other" apart. */
  topics: (query: AnalyticsQuery & { interval: Interval; limit?: number }, signal?: AbortSignal) =>
    request<TopicsReport>('GET', '/api/v1/analytics/topics', { query, signal }),
  /** Conversation signals: by signal with trends, per topic, and the topics needing attention. */
  signals: (query: AnalyticsQuery & { interval: Interval }, signal?: AbortSignal) =>
    request<SignalsReport>('GET', '/api/v1/analytics/signals', { query, signal }),
}

export const pipeline = {
  /** How current the conversations, analytics and analysis are. */
  status: (signal?: AbortSignal) => request<PipelineStatus>('GET', '/api/v1/status', { signal }),
}
