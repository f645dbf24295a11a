import { assertNever } from '@cas/eventlog'
import { type EventType, type RecordedEvent, TOPIC_COMMAND_EVENT_TYPES } from '@cas/events'
import type pg from 'pg'
import { ChatbotChanges } from './chatbot-fold.ts'
import { writeChatbots } from './chatbots.ts'
import { ConversationChanges } from './conversation-fold.ts'
import { writeConversations } from './conversations.ts'
import { takeOutErased } from './erasure.ts'
import { MessageChanges } from './message-fold.ts'
import { writeMessages } from './messages.ts'
import { ReanalysisChanges } from './reanalysis.ts'
import { RollupChanges } from './rollups.ts'
import { SignalPeriodChanges } from './signal-periods.ts'
import { SignalChanges } from './signals.ts'
import { TopicCommandLogChanges } from './topic-command-log.ts'
import { TopicChanges } from './topics.ts'

/**
 * The read models, each declared once (the model is Emmett's projections): its tables, with what a
 * chatbot's deletion and a conversation's erasure do to each and whether the query role reads it under
 * row-level security; the events it handles; and its fold and writer for a batch. The live projector
 * (apply.ts), the rebuild (rebuild.ts) and the isolation test (services/query) are derived from it.
 *
 * Adding a read model: its migration (tables, `cas_protect_read_model` for row-level security), its
 * fold and writer, and an entry here. Adding an event type: its schema in libs/events, and its place
 * here (a read model's `events`, or `UNPROJECTED` with why): this file does not compile until it has one.
 */

/** What `chatbot.deleted` does to a table. */
export type OnChatbotDeleted =
  /** Its rows of the chatbot (`chatbot_id`) are deleted. */
  | 'rows-deleted'
  /** The chatbot's own row (`id`) is deleted. */
  | 'row-deleted'
  /** An organization's rollup: the chatbot's share is taken out (RollupChanges.removeChatbot). */
  | 'chatbot-taken-out'
  /** The tombstone that drops the chatbot's late events. */
  | 'tombstone'
  | 'unchanged'

/** What `conversation.erased` does to a table (erasure.ts). */
export type OnErasure =
  /** Its rows of the conversation (`conversation_id`) are deleted. */
  | 'rows-deleted'
  /** The conversation's own row (`id`) is deleted. */
  | 'row-deleted'
  /** A rollup: the conversation's messages and results are taken back out of their hours. */
  | 'counts-taken-out'
  /** Activity and reach: the conversation's hours are unlinked and their neighbours relinked. */
  | 'relinked'
  /** The tombstone that drops the conversation's late analysis results. */
  | 'tombstone'
  | 'unchanged'

export interface ReadModelTable {
  readonly name: string
  /** The query role reads it, confined to the organization of its transaction (cas_protect_read_model). */
  readonly rowLevelSecurity: boolean
  readonly onChatbotDeleted: OnChatbotDeleted
  readonly onErasure: OnErasure
}

/** A read model's changes for one batch: its fold (`add`, pure), then its writer (`flush`). */
export interface ModelChanges<E extends EventType> {
  add(event: RecordedEvent<E>): void
  flush(client: pg.ClientBase): Promise<void>
}

/**
 * What a read model does for a barrier (`chatbot.deleted`, `conversation.erased`) beyond the deletes its
 * tables declare (`rows-deleted`, `row-deleted`: derived, barriers.ts). `takeOut` runs before any row of
 * any read model goes (it may read them): the work of its tables' `chatbot-taken-out`,
 * `counts-taken-out` and `relinked`. `remember` runs after they went: the work of its `tombstone` table.
 * A model has a hook exactly when one of its tables declares such work (checkBarrierHooks).
 */
export interface BarrierHooks<B extends Barrier> {
  readonly takeOut?: (client: pg.ClientBase, event: RecordedEvent<B>, rollups: RollupChanges) => Promise<void>
  readonly remember?: (client: pg.ClientBase, event: RecordedEvent<B>) => Promise<void>
}

export interface ReadModel<E extends EventType = EventType> {
  readonly name: string
  readonly tables: readonly ReadModelTable[]
  /** The events it folds (besides the deletion and erasure every table declares). */
  readonly events: readonly E[]
  /** Its changes for a new batch; the conversation and message models add to the shared rollups. */
  readonly changes: (rollups: RollupChanges) => ModelChanges<E>
  /** Its work for a chatbot's deletion beyond its tables' deletes. */
  readonly onChatbotDeleted?: BarrierHooks<'chatbot.deleted'>
  /** Its work for a conversation's erasure beyond its tables' deletes. */
  readonly onErasure?: BarrierHooks<'conversation.erased'>
}

const readModel = <E extends EventType>(model: ReadModel<E>) => model

const table = (
  name: string,
  onChatbotDeleted: OnChatbotDeleted,
  onErasure: OnErasure,
  rowLevelSecurity = true,
): ReadModelTable => ({ name, rowLevelSecurity, onChatbotDeleted, onErasure })

const chatbots = readModel({
  name: 'chatbots',
  tables: [table('rm_chatbots', 'row-deleted', 'unchanged')],
  events: [
    'chatbot.created',
    'chatbot.renamed',
    'chatbot.settings-changed',
    'chatbot.key-rotated',
    // Owners' and admins' topic commands: the chatbot's row keeps only their stream version.
    'chatbot.topic-rename-requested',
    'chatbot.topic-hide-requested',
    'chatbot.topic-unhide-requested',
    'chatbot.topic-merge-requested',
    'chatbot.topic-creation-requested',
    'chatbot.reanalysis-requested',
  ],
  changes: () => {
    const changes = new ChatbotChanges()
    return { add: (event) => changes.add(event), flush: (client) => writeChatbots(client, changes) }
  },
})

/**
 * When each of a chatbot's signals was on: the conversations checked for a signal (issue 32), from the
 * settings each chatbot.created and chatbot.settings-changed carries whole.
 */
const signalPeriods = readModel({
  name: 'signal-periods',
  tables: [table('rm_signal_periods', 'rows-deleted', 'unchanged')],
  events: ['chatbot.created', 'chatbot.settings-changed'],
  changes: () => {
    const changes = new SignalPeriodChanges()
    return { add: (event) => changes.add(event), flush: (client) => changes.flush(client) }
  },
})

const topics = readModel({
  name: 'topics',
  tables: [
    table('rm_topics', 'rows-deleted', 'unchanged'),
    table('rm_themes', 'rows-deleted', 'unchanged'),
    table('rm_topic_reclustering', 'rows-deleted', 'unchanged'),
    table('rm_topic_commands', 'rows-deleted', 'unchanged'),
  ],
  events: [
    'analysis.topic-discovered',
    'analysis.topic-relabeled',
    'analysis.topic-merged',
    'analysis.topic-split',
    'analysis.topic-retired',
    'analysis.topic-renamed-by-user',
    'analysis.topic-hidden',
    'analysis.topic-unhidden',
    'analysis.topic-merged-by-user',
    'analysis.themes-assigned',
    'analysis.topics-settling',
    'analysis.topics-reclustered',
    'analysis.topics-recluster-failed',
    'analysis.topic-created-by-user',
    // How far the chatbot's topic commands are handled, with the topic rows they changed.
    'analysis.topic-command-handled',
    // The topics an analysis named, counted as they are used.
    'analysis.conversation-analyzed',
    'analysis.messages-analyzed',
  ],
  changes: () => {
    const changes = new TopicChanges()
    return {
      add: (event) => {
        switch (event.type) {
          case 'analysis.conversation-analyzed':
            changes.addNamed(event, event.payload.topics)
            return
          case 'analysis.messages-analyzed':
            for (const r of event.payload.results) changes.addNamed(event, r.topics)
            return
          case 'analysis.topic-discovered':
          case 'analysis.topic-relabeled':
          case 'analysis.topic-merged':
          case 'analysis.topic-split':
          case 'analysis.topic-retired':
          case 'analysis.topic-renamed-by-user':
          case 'analysis.topic-hidden':
          case 'analysis.topic-unhidden':
          case 'analysis.topic-merged-by-user':
          case 'analysis.themes-assigned':
          case 'analysis.topics-settling':
          case 'analysis.topics-reclustered':
          case 'analysis.topics-recluster-failed':
          case 'analysis.topic-created-by-user':
          case 'analysis.topic-command-handled':
            changes.add(event)
            return
          default:
            assertNever(event, 'event')
        }
      },
      flush: (client) => changes.flush(client),
    }
  },
})

/** What became of each topic command: its request on the chatbot's stream, then its outcome. */
const topicCommandLog = readModel({
  name: 'topic-command-log',
  tables: [table('rm_topic_command_log', 'rows-deleted', 'unchanged')],
  events: [...TOPIC_COMMAND_EVENT_TYPES, 'analysis.topic-command-handled'],
  changes: () => {
    const changes = new TopicCommandLogChanges()
    return { add: (event) => changes.add(event), flush: (client) => changes.flush(client) }
  },
})

const conversations = readModel({
  name: 'conversations',
  tables: [table('rm_conversations', 'rows-deleted', 'row-deleted')],
  events: [
    'conversation.started',
    'conversation.metadata-updated',
    'conversation.messages-captured',
    'analysis.conversation-analyzed',
  ],
  changes: (rollups) => {
    const changes = new ConversationChanges()
    return {
      add: (event) => changes.add(event),
      flush: (client) => writeConversations(client, changes, rollups),
    }
  },
})

const messages = readModel({
  name: 'messages',
  tables: [table('rm_messages', 'rows-deleted', 'rows-deleted')],
  events: ['conversation.messages-captured', 'analysis.messages-analyzed'],
  changes: (rollups) => {
    const changes = new MessageChanges()
    return {
      add: (event) => {
        switch (event.type) {
          case 'conversation.messages-captured':
            changes.addCaptured(event)
            return
          case 'analysis.messages-analyzed':
            changes.addAnalyzed(event)
            return
          default:
            assertNever(event, 'event')
        }
      },
      flush: (client) => writeMessages(client, changes, rollups),
    }
  },
})

const signals = readModel({
  name: 'signals',
  tables: [
    table('rm_conversation_signals', 'rows-deleted', 'rows-deleted'),
    table('rm_signals_decided', 'rows-deleted', 'rows-deleted'),
  ],
  // messages-analyzed: the analysis decides the conversation's signals again in its transaction.
  events: ['analysis.signals-detected', 'analysis.messages-analyzed'],
  changes: () => {
    const changes = new SignalChanges()
    return { add: (event) => changes.add(event), flush: (client) => changes.flush(client) }
  },
})

/** Each chatbot's latest re-analysis, as its progress events report it. */
const reanalysis = readModel({
  name: 'reanalysis',
  tables: [table('rm_reanalysis', 'rows-deleted', 'unchanged')],
  events: [
    'analysis.reanalysis-started',
    'analysis.reanalysis-progressed',
    'analysis.reanalysis-finished',
    'analysis.reanalysis-failed',
  ],
  changes: () => {
    const changes = new ReanalysisChanges()
    return { add: (event) => changes.add(event), flush: (client) => changes.flush(client) }
  },
})

/** The hourly and daily rollups and reach: written from the deltas the conversation and message models add. */
const rollups = readModel({
  name: 'rollups',
  tables: [
    table('rm_hourly_stats', 'rows-deleted', 'counts-taken-out'),
    table('rm_hourly_topics', 'rows-deleted', 'counts-taken-out'),
    table('rm_daily_topics', 'rows-deleted', 'counts-taken-out'),
    table('rm_hourly_languages', 'rows-deleted', 'counts-taken-out'),
    table('rm_hourly_activity', 'rows-deleted', 'relinked'),
    table('rm_chatbot_user_hours', 'rows-deleted', 'relinked'),
    table('rm_org_hourly_stats', 'chatbot-taken-out', 'counts-taken-out'),
    table('rm_org_user_hours', 'chatbot-taken-out', 'relinked'),
    table('rm_org_end_users', 'chatbot-taken-out', 'relinked'),
  ],
  events: [],
  changes: (shared) => ({
    add: () => {},
    flush: (client) => shared.flush(client),
  }),
  onChatbotDeleted: {
    // Its share of the organization's rollups and end users' hours; its own rows go with the chatbot.
    takeOut: (client, e, rollups) => rollups.removeChatbot(client, e.orgId, e.chatbotId),
  },
  onErasure: { takeOut: takeOutErased },
})

/** The tombstones of deletion and erasure: written by them (`remember`), read before every batch (apply.ts). */
const tombstones = readModel({
  name: 'tombstones',
  tables: [
    // The projector's own: the query service reads deleted chatbots through the `deleted_chatbots` view.
    table('rm_deleted_chatbots', 'tombstone', 'unchanged', false),
    table('rm_erased_conversations', 'unchanged', 'tombstone'),
  ],
  events: [],
  changes: () => ({ add: () => {}, flush: async () => {} }),
  onChatbotDeleted: {
    remember: async (client, e) => {
      await client.query(
        'INSERT INTO rm_deleted_chatbots (chatbot_id, org_id, deleted_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [e.chatbotId, e.orgId, e.occurredAt],
      )
    },
  },
  onErasure: {
    remember: async (client, e) => {
      await client.query(
        `INSERT INTO rm_erased_conversations (conversation_id, org_id, chatbot_id, erased_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING`,
        [e.streamId, e.orgId, e.chatbotId, e.occurredAt],
      )
    },
  },
})

/**
 * Every read model, in the order a batch writes them: chatbots and their signal periods, topics,
 * conversations, messages, signals, then the rollups both conversations and messages add to. The same order in every transaction
 * (conversations locked before their messages), so that two consumers touching one conversation (its
 * capture and its analysis come on different topics) never deadlock.
 */
export const READ_MODELS = [
  chatbots,
  signalPeriods,
  topics,
  topicCommandLog,
  conversations,
  messages,
  signals,
  reanalysis,
  rollups,
  tombstones,
] as const

/** Applied on their own, after the batch so far is written (apply.ts): they read and delete what is there. */
export const BARRIERS = ['chatbot.deleted', 'conversation.erased'] as const
export type Barrier = (typeof BARRIERS)[number]

/** Events no read model folds, and why. */
export const UNPROJECTED = [
  // Failures change no read model.
  'analysis.failed',
  // Members and invitations are the gateway's (memberships, invitations, audit_log); the projector does
  // not subscribe to the organization stream.
  'organization.created',
  'organization.member-invited',
  'organization.invitation-revoked',
  'organization.member-joined',
  'organization.member-role-changed',
  'organization.member-removed',
  'organization.deleted',
] as const

type Placed =
  | (typeof READ_MODELS)[number]['events'][number]
  | (typeof BARRIERS)[number]
  | (typeof UNPROJECTED)[number]
/** Every event type has a place above: an error here names the one that has none. */
const everyEventPlaced: [Exclude<EventType, Placed>] extends [never] ? true : Exclude<EventType, Placed> =
  true
void everyEventPlaced

/** Every table of the read models, rebuilt together (rebuild.ts). */
export const READ_MODEL_TABLES: readonly string[] = READ_MODELS.flatMap((m) => m.tables.map((t) => t.name))

/** The tables the query role reads under row-level security. */
export const PROTECTED_TABLES: readonly string[] = READ_MODELS.flatMap((m) =>
  m.tables.filter((t) => t.rowLevelSecurity).map((t) => t.name),
)

/** The tables holding rows of one chatbot (`chatbot_id`), cleared when it is deleted. */
export const CHATBOT_TABLES: readonly string[] = READ_MODELS.flatMap((m) =>
  m.tables.filter((t) => t.onChatbotDeleted === 'rows-deleted').map((t) => t.name),
)

/** The tables holding rows of one conversation (`conversation_id`), cleared when it is erased. */
export const CONVERSATION_TABLES: readonly string[] = READ_MODELS.flatMap((m) =>
  m.tables.filter((t) => t.onErasure === 'rows-deleted').map((t) => t.name),
)

/** The tables holding one chatbot's own row (`id`), deleted with it. */
export const CHATBOT_ROW_TABLES: readonly string[] = READ_MODELS.flatMap((m) =>
  m.tables.filter((t) => t.onChatbotDeleted === 'row-deleted').map((t) => t.name),
)

/** The tables holding one conversation's own row (`id`), deleted when it is erased. */
export const CONVERSATION_ROW_TABLES: readonly string[] = READ_MODELS.flatMap((m) =>
  m.tables.filter((t) => t.onErasure === 'row-deleted').map((t) => t.name),
)

const TAKEN_OUT: readonly (OnChatbotDeleted | OnErasure)[] = [
  'chatbot-taken-out',
  'counts-taken-out',
  'relinked',
]

/**
 * Where a read model's barrier hooks and its tables' declarations disagree: a table declaring work
 * beyond a delete (taken out, relinked, a tombstone) in a model without the hook that does it, or a hook
 * no table declares. Empty for READ_MODELS (checked below: the projector does not load otherwise).
 */
export function checkBarrierHooks(models: readonly ReadModel[]): string[] {
  const problems: string[] = []
  for (const model of models) {
    for (const [barrier, hooks, of] of [
      ['chatbot deletion', model.onChatbotDeleted, (t: ReadModelTable) => t.onChatbotDeleted],
      ['erasure', model.onErasure, (t: ReadModelTable) => t.onErasure],
    ] as const) {
      const takenOut = model.tables.filter((t) => TAKEN_OUT.includes(of(t))).map((t) => t.name)
      const tombstones = model.tables.filter((t) => of(t) === 'tombstone').map((t) => t.name)
      if (takenOut.length > 0 && !hooks?.takeOut)
        problems.push(`${model.name}: ${takenOut.join(', ')} taken out on ${barrier}, but no takeOut`)
      if (takenOut.length === 0 && hooks?.takeOut)
        problems.push(`${model.name}: a takeOut on ${barrier}, but no table declares one`)
      if (tombstones.length > 0 && !hooks?.remember)
        problems.push(`${model.name}: ${tombstones.join(', ')} a tombstone of ${barrier}, but no remember`)
      if (tombstones.length === 0 && hooks?.remember)
        problems.push(`${model.name}: a remember on ${barrier}, but no tombstone table`)
    }
  }
  return problems
}
{
  const problems = checkBarrierHooks(READ_MODELS as readonly ReadModel[])
  if (problems.length > 0) throw new Error(`registry.ts: ${problems.join('; ')}`)
}

/** The read models folding each event type. */
const FOLDED_BY = new Map<string, ReadModel[]>()
for (const model of READ_MODELS as readonly ReadModel[]) {
  for (const type of model.events) FOLDED_BY.set(type, [...(FOLDED_BY.get(type) ?? []), model])
}

/** The changes a run of events makes to the read models, gathered to be written together. */
export class ReadModelChanges {
  readonly rollups = new RollupChanges()
  private readonly models = new Map<ReadModel, ModelChanges<EventType>>(
    (READ_MODELS as readonly ReadModel[]).map((m) => [m, m.changes(this.rollups)]),
  )

  /** Folds an event into every read model that handles it. */
  add(event: RecordedEvent): void {
    const models = FOLDED_BY.get(event.type)
    if (models) {
      for (const model of models) this.models.get(model)!.add(event)
      return
    }
    if ((BARRIERS as readonly string[]).includes(event.type))
      throw new Error(`${event.type} is applied on its own, after a flush`)
    if (!(UNPROJECTED as readonly string[]).includes(event.type))
      throw new Error(`unhandled event ${JSON.stringify(event)}`)
  }

  /** Writes everything gathered, read model by read model in READ_MODELS' order. */
  async flush(client: pg.ClientBase): Promise<void> {
    for (const changes of this.models.values()) await changes.flush(client)
  }
}
