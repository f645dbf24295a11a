// The shapes of the HTTP API the dashboard reads (shared/API.md; GET /api/v1/openapi.json has them all).
import type { ChatbotSettings } from '@cas/settings'

export interface User {
  readonly id: string
  readonly email: string
  readonly name: string
}

export type Role = 'owner' | 'admin' | 'member' | 'viewer'

/** What a role may do (libs/auth permissions.ts); the server decides every request all the same. */
export type Permission =
  | 'conversations:read'
  | 'analytics:read'
  | 'chatbots:read'
  | 'chatbots:edit'
  | 'chatbots:create'
  | 'chatbots:rotate-key'
  | 'chatbots:delete'
  | 'end-users:erase'
  | 'topics:manage'
  | 'members:read'
  | 'members:manage'
  | 'audit:read'
  | 'organization:leave'
  | 'organization:delete'

/** An organization a person belongs to, with their role in it. */
export interface Organization {
  readonly id: string
  readonly name: string
  readonly role: Role
}

export interface Account {
  readonly user: User
  /** The organization the session works in; null when the person belongs to none. */
  readonly organization: (Organization & { readonly permissions: readonly Permission[] }) | null
  readonly organizations: readonly Organization[]
}

export interface Member {
  readonly userId: string
  readonly email: string
  readonly name: string
  readonly role: Role
  readonly joinedAt: string
}

export interface Invitation {
  readonly id: string
  readonly email: string
  readonly role: Role
  readonly invitedBy: User | null
  readonly createdAt: string
  readonly expiresAt: string
}

export interface Invited {
  readonly invitation: Invitation
  /** Shown this once. */
  readonly link: string
  readonly emailed: boolean
}

/** What an invitation link invites to. */
export interface InvitationPreview {
  readonly organization: { readonly name: string }
  readonly email: string
  readonly role: Role
  readonly invitedBy: string | null
  readonly expiresAt: string
}

export interface AuditEntry {
  readonly id: string
  readonly occurredAt: string
  readonly action: string
  readonly actor: { readonly id: string; readonly email: string | null; readonly name: string | null } | null
  readonly target: {
    readonly type: 'organization' | 'member' | 'invitation' | 'chatbot'
    readonly id: string
    readonly name: string | null
  }
  readonly details: Record<string, unknown>
}

export interface AuditPage {
  readonly entries: AuditEntry[]
  readonly nextCursor: string | null
}

/**
 * The settings keys the service reads (anything else is stored as given): the type of the one settings
 * schema (libs/settings), so the form cannot drift from what the server accepts.
 */
export type { ChatbotSettings, CustomFieldType } from '@cas/settings'

export interface Chatbot {
  readonly id: string
  readonly name: string
  /** The first 13 characters of the key and `…`. */
  readonly api_key_prefix: string
  readonly settings: ChatbotSettings
  readonly created_at: string
}

/** The create and rotate-key responses: the only time the full key is seen. */
export interface ChatbotWithKey {
  readonly ok: true
  readonly chatbot: Chatbot
  readonly apiKey: string
}

export type SentimentLabel = 'positive' | 'neutral' | 'negative'

export interface Sentiment {
  readonly score: number
  readonly label: SentimentLabel
}

export interface Conversation {
  readonly id: string
  readonly chatbotId: string
  /** The caller's own conversation id. */
  readonly conversationId: string
  readonly user: Record<string, unknown>
  readonly organization: Record<string, unknown>
  readonly session: Record<string, unknown>
  readonly custom: Record<string, unknown>
  readonly messageCount: number
  readonly firstMessageAt: string
  readonly lastMessageAt: string
  readonly createdAt: string
  readonly updatedAt: string
  /** The mean of the end user's messages. */
  readonly sentiment: Sentiment | null
  /** The mean of the assistant's messages. */
  readonly assistantSentiment: Sentiment | null
  /** The labels of the topics of the end user's messages, most first. */
  readonly topics: string[]
  /** Their ids, in the same order (the conversation list's `topic` filter takes either). */
  readonly topicIds: string[]
  /**
   * The end user's first message with text (by sentAt), on one line, at most 160 characters (an ellipsis
   * ends one that was cut); null while the end user has said nothing.
   */
  readonly preview: string | null
  /** Its signals (escalation, bot_failure, …, custom:<slug>), built-in ones first. */
  readonly signals: ConversationSignal[]
}

export interface ConversationSignal {
  readonly name: string
  /** A chatbot's own signal's label; null for a built-in one. */
  readonly label: string | null
  readonly confidence: number
  /** The ids of the messages it fired on. */
  readonly evidence: string[]
}

export interface SignalsReport {
  readonly interval: 'hour' | 'day' | 'week'
  readonly range: { readonly from: string; readonly to: string }
  readonly conversations: number
  readonly signals: {
    readonly name: string
    readonly label: string | null
    readonly conversations: number
    readonly rate: number
    readonly trend: { readonly bucket: string; readonly conversations: number; readonly rate: number }[]
  }[]
  readonly topics: {
    readonly id: string
    readonly label: string
    readonly conversations: number
    readonly signals: Record<string, { readonly conversations: number; readonly rate: number }>
  }[]
  readonly needsAttention: {
    readonly id: string
    readonly label: string
    readonly conversations: number
    readonly botFailures: number
    readonly botFailureRate: number
    readonly score: number
    readonly examples: string[]
    readonly link: string
  }[]
  readonly buckets: { readonly bucket: string; readonly conversations: number }[]
}

export interface Message {
  readonly id: string
  readonly role: string
  readonly content: string
  readonly sentAt: string
  readonly sentiment: Sentiment | null
}

export interface ConversationDetail extends Conversation {
  readonly messages: Message[]
}

export interface ConversationPage {
  readonly conversations: Conversation[]
  readonly nextCursor: string | null
}

export interface SentimentCounts {
  readonly average: number | null
  readonly positive: number
  readonly neutral: number
  readonly negative: number
  readonly analyzed: number
}

export interface Overview {
  readonly range: { readonly from: string; readonly to: string }
  readonly totalConversations: number
  readonly totalMessages: number
  readonly uniqueUsers: number
  readonly avgMessagesPerConversation: number
  /** The end users' messages. */
  readonly sentiment: SentimentCounts
  /** The assistant's messages, apart. */
  readonly assistantSentiment: SentimentCounts
  /**
   * `topic` is the label; `count` the conversations in it with a message in range, ranked as on the Topics
   * page (most conversations, then most end-user messages, then by label); "other" apart.
   */
  readonly topTopics: { readonly topic: string; readonly id: string; readonly count: number }[]
  /** "other", the long tail: conversations in no topic, shown after the top topics; null when none. */
  readonly otherTopic: { readonly topic: string; readonly id: string; readonly count: number } | null
  readonly messagesByRole: Record<string, number>
}

export type Interval = 'hour' | 'day' | 'week'

export interface SentimentPoint {
  readonly bucket: string
  readonly average: number | null
  readonly positive: number
  readonly neutral: number
  readonly negative: number
  readonly count: number
}

export interface SentimentTrend {
  readonly interval: Interval
  readonly role: 'user' | 'assistant'
  readonly range: { readonly from: string; readonly to: string }
  readonly points: SentimentPoint[]
}

export interface TopicTrendPoint {
  /** The bucket's start (local midnight for days and weeks), in UTC. */
  readonly bucket: string
  readonly messages: number
}

/** A topic's figures over the range; "other" (the long tail) has these only. */
export interface TopicFigures {
  /** Conversations with a message in range that are in the topic. */
  readonly conversations: number
  /** The topic's end-user messages in range. */
  readonly messages: number
  /** conversations / the conversations in range that have a topic ("other" included), 0..1. */
  readonly share: number
  /** The mean sentiment (−1..1) of the topic's end-user messages; null when none was analysed. */
  readonly averageSentiment: number | null
  readonly trend: TopicTrendPoint[]
}

export interface TopicExample {
  /** The conversation's id (for its page). */
  readonly id: string
  readonly conversationId: string
  readonly lastMessageAt: string
  readonly sentiment: SentimentLabel | null
  /** The first end-user message of it in the topic, cut at 200 characters. */
  readonly excerpt: string | null
}

export interface Topic extends TopicFigures {
  /** Stable: the conversation list's `topic` filter takes it. */
  readonly id: string
  readonly chatbotId: string
  readonly label: string
  readonly keywords: string[]
  /** One of the chatbot's own topics (settings.topics), not a discovered one. */
  readonly configured: boolean
  /** The theme it is grouped in; null for key phrases and topics not grouped yet. */
  readonly theme: { readonly id: string; readonly label: string } | null
  /** The most recent conversations of the topic, at most 3. */
  readonly examples: TopicExample[]
}

/** A handful of a chatbot's topics that are about one thing ("Card"), with their totals over the range. */
export interface Theme {
  /** The conversation list's `theme` filter takes it. */
  readonly id: string
  readonly chatbotId: string
  readonly label: string
  /** Conversations with a message in range in any of its topics, each once. */
  readonly conversations: number
  readonly messages: number
  readonly share: number
  /** Its topics with conversations in range, as ranked. */
  readonly topicIds: string[]
}

export interface TopicsReport {
  readonly interval: Interval
  readonly range: { readonly from: string; readonly to: string }
  readonly conversationsWithTopics: number
  /** Most conversations first. */
  readonly topics: Topic[]
  /** The topics' themes, most conversations first. */
  readonly themes: Theme[]
  /** The long tail: end users' messages no topic is similar enough to. */
  readonly other: TopicFigures | null
  /** The background re-clustering: settling while requests wait for the next run. */
  readonly reclustering: { readonly settling: boolean; readonly lastReclusteredAt: string | null }
  /** Topics an owner or admin hid: in neither `topics` nor `themes`. */
  readonly hiddenTopics: { readonly id: string; readonly chatbotId: string; readonly label: string }[]
}

/** A topic as a command on it (rename, hide, unhide, merge) leaves it. */
export interface ManagedTopic {
  readonly id: string
  readonly label: string
  readonly pinned: boolean
  readonly hidden: boolean
  readonly configured: boolean
  readonly mergedInto: string | null
}

/** How current one stage of the pipeline is (GET /api/v1/status). */
export interface StageFreshness {
  /** up-to-date: behind by less than 5 s; unknown: the stage has not reported for 30 s. */
  readonly state: 'up-to-date' | 'behind' | 'unknown'
  /** How long ago the oldest work not done yet was committed; null when unknown. */
  readonly behindSeconds: number | null
  readonly checkedAt: string | null
}

/** How current the figures are: the read models (`projection`) and sentiment and topics (`analysis`). */
export interface PipelineStatus {
  readonly at: string
  readonly projection: StageFreshness
  readonly analysis: StageFreshness
}
