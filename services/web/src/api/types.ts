// The shapes of the HTTP API the dashboard reads: aliases of the types generated from the OpenAPI document
// (openapi.gen.ts, `npm run openapi:types`), which the route schemas make. Change a shape in its route's
// schema, never here.
import type { ChatbotSettings } from '@cas/settings'
import type { operations } from './openapi.gen.ts'

/** The JSON body of an operation's answer (by its operationId), without its `ok: true`. */
type Answer<Op extends keyof operations> = operations[Op]['responses'] extends {
  200: { content: { 'application/json': infer Body } }
}
  ? Omit<Body, 'ok'>
  : never

export type Account = Answer<'getAccount'>
export type User = Account['user']
/** An organization a person belongs to, with their role in it. */
export type Organization = Account['organizations'][number]
export type Role = Organization['role']
/** What a role may do; the server decides every request all the same. */
export type { Permission } from '@cas/auth/permissions'

export type Member = Answer<'listMembers'>['members'][number]
export type Invitation = Answer<'listInvitations'>['invitations'][number]
export type Invited = Answer<'createInvitation'>
/** What an invitation link invites to. */
export type InvitationPreview = Answer<'lookupInvitation'>['invitation']

export type AuditPage = Answer<'listAuditEntries'>
export type AuditEntry = AuditPage['entries'][number]

/**
 * The settings keys the service reads (anything else is stored as given): the type of the one settings
 * schema (libs/settings), so the form cannot drift from what the server accepts.
 */
export type { ChatbotSettings, CustomFieldType } from '@cas/settings'

/**
 * A chatbot, its settings read as the settings schema has them (the API answers them as stored, unknown
 * keys included, so the document says only "an object").
 */
export type Chatbot = Omit<Answer<'getChatbot'>, 'settings'> & { readonly settings: ChatbotSettings }
/** The create and rotate-key responses: the only time the full key is seen. */
export type ChatbotWithKey = Omit<Answer<'createChatbot'>, 'chatbot'> & { readonly chatbot: Chatbot }
export type CaptureResult = Answer<'sendTestConversation'>

export type ConversationPage = Answer<'listConversations'>
export type Conversation = ConversationPage['conversations'][number]
export type ConversationSignal = Conversation['signals'][number]
export type Sentiment = NonNullable<Conversation['sentiment']>
export type SentimentLabel = Sentiment['label']
export type ConversationDetail = Answer<'getConversation'>['conversation']
export type Message = ConversationDetail['messages'][number]

export type Overview = Answer<'getAnalyticsOverview'>
export type SentimentCounts = Overview['sentiment']

export type SentimentTrend = Answer<'getAnalyticsSentiment'>
export type SentimentPoint = SentimentTrend['points'][number]
export type Interval = SentimentTrend['interval']

export type SignalsReport = Answer<'getAnalyticsSignals'>

export type TopicsReport = Answer<'getAnalyticsTopics'>
export type Topic = TopicsReport['topics'][number]
/** A topic's figures over the range; "other" (the long tail) has these only. */
export type TopicFigures = NonNullable<TopicsReport['other']>
export type TopicTrendPoint = TopicFigures['trend'][number]
export type TopicExample = Topic['examples'][number]
/** A handful of a chatbot's topics that are about one thing ("Card"), with their totals over the range. */
export type Theme = TopicsReport['themes'][number]
/** A topic as a command on it (rename, hide, unhide, merge) leaves it. */
export type ManagedTopic = Answer<'renameTopic'>['topic']
/** The answer to a topic command: the topic as it leaves it, and the command's id (null: nothing to do). */
export type TopicCommandAnswer = Answer<'renameTopic'>
/** One of a chatbot's recent topic commands, with what became of it. */
export type TopicCommandEntry = Answer<'listTopicCommands'>['commands'][number]
/** A chatbot's latest re-analysis (null before the first). */
export type Reanalysis = Answer<'getReanalysis'>['reanalysis']
export type ChatbotAnalyzers = Answer<'getChatbotAnalyzers'>

/** How current the figures are: the read models (`projection`) and sentiment and topics (`analysis`). */
export type PipelineStatus = Answer<'getStatus'>
/** How current one stage of the pipeline is (GET /api/v1/status). */
export type StageFreshness = PipelineStatus['projection']
