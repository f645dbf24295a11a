import type pg from 'pg'
import {
  type ActivityRow,
  applyUserHourDeltas,
  eraseActivity,
  lockEndUsers,
  removeChatbotUsers,
  upsertActivity,
} from './reach.ts'
import {
  type HourlyDelta,
  type LanguageDelta,
  MEASURES,
  RollupDeltas,
  type TopicDelta,
} from './rollup-deltas.ts'

/**
 * The rollups' I/O: the deltas a batch gathered (RollupDeltas, the fold's side) written with multi-row
 * statements (each table's rows in one, the hourly stats' two tables together, the results' three
 * together, the rows taken back to zero deleted in one), and the distinct-count chains linked (reach.ts).
 */
export class RollupChanges extends RollupDeltas {
  /**
   * Takes an erased conversation's activity out (reach.ts eraseActivity); its messages are taken back
   * with addMessage / addAnalysis (-1). Pending deltas of the conversation must have been flushed.
   */
  async eraseConversation(client: pg.ClientBase, conversationId: string): Promise<void> {
    const { conversations, users } = await eraseActivity(client, conversationId)
    this.addLastActive(conversations, 'lastActiveConversations')
    this.addLastActive(users, 'lastActiveUsers')
  }

  /**
   * Before a chatbot's rows are deleted (they go with it): takes them out of the organization's rollups
   * and its end users' hours. Flushes.
   */
  async removeChatbot(client: pg.ClientBase, orgId: string, chatbotId: string): Promise<void> {
    await this.flush(client)
    this.addLastActive(await removeChatbotUsers(client, chatbotId), 'lastActiveUsers')
    // Its rows' sums come off the organization's; the organization's last active users are its own.
    const columns = COLUMNS.filter((c) => c !== 'last_active_users')
    await client.query(
      `INSERT INTO rm_org_hourly_stats AS o (org_id, hour, ${columns.join(', ')})
       SELECT org_id, hour, ${columns.map((c) => `-${c}`).join(', ')}
         FROM rm_hourly_stats WHERE chatbot_id = $1 ORDER BY hour
       ON CONFLICT (org_id, hour) DO UPDATE SET ${ADD_TO}`,
      [chatbotId],
    )
    await this.flush(client)
    await client.query('DELETE FROM rm_org_hourly_stats WHERE org_id = $1 AND messages <= 0', [orgId])
  }

  /**
   * Writes the accumulated deltas: after the activity's, the hourly stats, the results' counts, then the
   * rows emptied: three statements at most, whatever the tables the batch touched.
   */
  async flush(client: pg.ClientBase): Promise<void> {
    const activity = this.takeActivity()
    if (activity.length > 0) await this.flushActivity(client, activity)
    const { stats, orgStats, hourlyTopics, dailyTopics, hourlyLanguages } = this.takeWrites()
    await upsertStats(client, stats, orgStats)
    await upsertResults(client, hourlyTopics, dailyTopics, hourlyLanguages)
    // A row a count was taken back from (a re-analysis, an erasure) disappears once it is back to zero, as if
    // its messages had never come (a rebuild agrees).
    const lowerStats = (s: HourlyDelta) => s.messages < 0
    const lowerCount = (t: TopicDelta | LanguageDelta) => t.n < 0
    await dropEmptied(client, [
      {
        table: 'rm_hourly_stats',
        key: { chatbot_id: 'uuid', hour: 'timestamptz' },
        rows: stats.filter(lowerStats).map((s) => [s.chatbotId, s.hour]),
      },
      {
        table: 'rm_org_hourly_stats',
        key: { org_id: 'uuid', hour: 'timestamptz' },
        rows: orgStats.filter(lowerStats).map((s) => [s.orgId, s.hour]),
      },
      {
        table: 'rm_hourly_topics',
        key: { chatbot_id: 'uuid', hour: 'timestamptz', topic: 'text' },
        rows: hourlyTopics.filter(lowerCount).map((t) => [t.chatbotId, t.hour, t.topic]),
      },
      {
        table: 'rm_daily_topics',
        key: { chatbot_id: 'uuid', day: 'timestamptz', topic: 'text' },
        rows: dailyTopics.filter(lowerCount).map((t) => [t.chatbotId, t.hour, t.topic]),
      },
      {
        table: 'rm_hourly_languages',
        key: { chatbot_id: 'uuid', hour: 'timestamptz', language: 'text' },
        rows: hourlyLanguages.filter(lowerCount).map((l) => [l.chatbotId, l.hour, l.language]),
      },
    ])
  }

  /**
   * Activity rows and the distinct-count chains: the end users concerned are locked by the activity
   * upsert (another projector instance may be adding hours of the same users), then their hours linked.
   */
  private async flushActivity(client: pg.ClientBase, activity: ActivityRow[]): Promise<void> {
    const { lastActive, users } = await upsertActivity(client, activity)
    this.addLastActive(lastActive, 'lastActiveConversations')
    // An activity row whose end user was replaced: that user is locked too.
    await lockEndUsers(
      client,
      users.filter((u) => u.delta < 0),
    )
    this.addLastActive(await applyUserHourDeltas(client, users), 'lastActiveUsers')
  }
}

/**
 * Adds deltas to the hourly rollup rows per chatbot (rm_hourly_stats) and per organization
 * (rm_org_hourly_stats), in one statement, in key order (two projector instances adding to the same hours
 * never deadlock).
 */
async function upsertStats(
  client: pg.ClientBase,
  perChatbot: readonly HourlyDelta[],
  perOrg: readonly HourlyDelta[],
): Promise<void> {
  if (perChatbot.length === 0 && perOrg.length === 0) return
  const params: unknown[] = []
  const insert = (
    table: string,
    keys: readonly (keyof HourlyDelta)[],
    conflict: string,
    rows: readonly HourlyDelta[],
  ) => {
    const columns = keys.map((k) => ({ orgId: 'org_id', chatbotId: 'chatbot_id', hour: 'hour' })[k as string])
    const arrays = [
      ...keys.map((k) => {
        params.push(rows.map((r) => r[k]))
        return `$${params.length}::${k === 'hour' ? 'timestamptz' : 'uuid'}[]`
      }),
      ...MEASURES.map((m) => {
        params.push(rows.map((r) => r[m]))
        return `$${params.length}::${m === 'sentimentSum' || m === 'assistantSentimentSum' ? 'float8' : 'int'}[]`
      }),
    ]
    return `INSERT INTO ${table} AS o (${columns.join(', ')}, ${COLUMNS.join(', ')})
            SELECT * FROM unnest(${arrays.join(', ')})
            ON CONFLICT (${conflict}) DO UPDATE SET ${ADD_TO}`
  }
  const chatbot = insert('rm_hourly_stats', ['orgId', 'chatbotId', 'hour'], 'chatbot_id, hour', perChatbot)
  const org = insert('rm_org_hourly_stats', ['orgId', 'hour'], 'org_id, hour', perOrg)
  await client.query({
    name: 'cas-rollups-stats',
    text: `WITH c AS (${chatbot}), o AS (${org}) SELECT`,
    values: params,
  })
}

/** Column of each measure, in MEASURES order. */
const COLUMNS = [
  'messages',
  'user_messages',
  'assistant_messages',
  'system_messages',
  'tool_messages',
  'sentiment_sum',
  'sentiment_count',
  'positive',
  'neutral',
  'negative',
  'assistant_sentiment_sum',
  'assistant_sentiment_count',
  'assistant_positive',
  'assistant_neutral',
  'assistant_negative',
  'last_active_conversations',
  'last_active_users',
]

/** The SET clause adding EXCLUDED's measures to the row's (alias o). */
const ADD_TO = COLUMNS.map((c) => `${c} = o.${c} + EXCLUDED.${c}`).join(', ')

/**
 * Adds an analysis result's deltas, in one statement: topics per hour and per day, languages per hour,
 * each in key order (two projector instances adding to the same rows never deadlock).
 */
async function upsertResults(
  client: pg.ClientBase,
  hourlyTopics: readonly TopicDelta[],
  dailyTopics: readonly TopicDelta[],
  hourlyLanguages: readonly LanguageDelta[],
): Promise<void> {
  if (hourlyTopics.length === 0 && dailyTopics.length === 0 && hourlyLanguages.length === 0) return
  const topicColumns = (t: readonly TopicDelta[]) => [
    t.map((x) => x.orgId),
    t.map((x) => x.chatbotId),
    t.map((x) => x.hour),
    t.map((x) => x.topic),
    t.map((x) => x.n),
    t.map((x) => x.sentimentSum),
  ]
  const topicTypes = ['uuid', 'uuid', 'timestamptz', 'text', 'int', 'float8']
  const unnest = (from: number, types: readonly string[]) =>
    `unnest(${types.map((t, i) => `$${from + i}::${t}[]`).join(', ')})`
  await client.query({
    name: 'cas-rollups-results',
    text: `WITH h AS (
       INSERT INTO rm_hourly_topics AS t (org_id, chatbot_id, hour, topic, messages, sentiment_sum)
       SELECT * FROM ${unnest(1, topicTypes)}
       ON CONFLICT (chatbot_id, hour, topic) DO UPDATE SET messages = t.messages + EXCLUDED.messages,
         sentiment_sum = t.sentiment_sum + EXCLUDED.sentiment_sum
     ), d AS (
       INSERT INTO rm_daily_topics AS t (org_id, chatbot_id, day, topic, messages, sentiment_sum)
       SELECT * FROM ${unnest(7, topicTypes)}
       ON CONFLICT (chatbot_id, day, topic) DO UPDATE SET messages = t.messages + EXCLUDED.messages,
         sentiment_sum = t.sentiment_sum + EXCLUDED.sentiment_sum
     ), l AS (
       INSERT INTO rm_hourly_languages AS l (org_id, chatbot_id, hour, language, messages)
       SELECT * FROM ${unnest(13, ['uuid', 'uuid', 'timestamptz', 'text', 'int'])}
       ON CONFLICT (chatbot_id, hour, language) DO UPDATE SET messages = l.messages + EXCLUDED.messages
     ) SELECT`,
    values: [
      ...topicColumns(hourlyTopics),
      ...topicColumns(dailyTopics),
      hourlyLanguages.map((l) => l.orgId),
      hourlyLanguages.map((l) => l.chatbotId),
      hourlyLanguages.map((l) => l.hour),
      hourlyLanguages.map((l) => l.language),
      hourlyLanguages.map((l) => l.n),
    ],
  })
}

/** The rows of one rollup table a batch took messages from: its key columns (with their types) and values. */
interface Lowered {
  readonly table: string
  /** Column → type, in the order of each row's values. */
  readonly key: Readonly<Record<string, string>>
  readonly rows: readonly (readonly unknown[])[]
}

/**
 * Deletes, in one statement, the rows of these tables that a batch took back to zero messages (only
 * rows the batch has just written, so already locked by it: no new lock, whatever the order).
 */
async function dropEmptied(client: pg.ClientBase, tables: readonly Lowered[]): Promise<void> {
  const values: unknown[] = []
  const deletes = tables
    .filter((t) => t.rows.length > 0)
    .map(({ table, key, rows }, i) => {
      const columns = Object.keys(key)
      const arrays = Object.values(key).map((type, c) => {
        values.push(rows.map((r) => r[c]))
        return `$${values.length}::${type}[]`
      })
      return `d${i} AS (DELETE FROM ${table} WHERE messages <= 0
         AND (${columns.join(', ')}) IN (SELECT * FROM unnest(${arrays.join(', ')})))`
    })
  if (deletes.length === 0) return
  await client.query(`WITH ${deletes.join(', ')} SELECT`, values)
}
