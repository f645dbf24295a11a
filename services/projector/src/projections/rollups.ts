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
 * The rollups' I/O: the deltas a batch gathered (RollupDeltas, the fold's side) written with one
 * multi-row statement per table, and the distinct-count chains linked (reach.ts).
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

  /** Writes the accumulated deltas: one multi-row statement per table. */
  async flush(client: pg.ClientBase): Promise<void> {
    const activity = this.takeActivity()
    if (activity.length > 0) await this.flushActivity(client, activity)
    const { stats, orgStats, hourlyTopics, dailyTopics, hourlyLanguages } = this.takeWrites()
    await upsertStats(client, stats, orgStats)
    // An hour emptied by an erasure disappears, as if its messages had never come (a rebuild agrees).
    const emptied = stats.filter((s) => s.messages < 0)
    if (emptied.length > 0) {
      await client.query(
        `DELETE FROM rm_hourly_stats WHERE messages <= 0
           AND (chatbot_id, hour) IN (SELECT * FROM unnest($1::uuid[], $2::timestamptz[]))`,
        [emptied.map((e) => e.chatbotId), emptied.map((e) => e.hour)],
      )
    }
    const orgEmptied = orgStats.filter((s) => s.messages < 0)
    if (orgEmptied.length > 0) {
      await client.query(
        `DELETE FROM rm_org_hourly_stats WHERE messages <= 0
           AND (org_id, hour) IN (SELECT * FROM unnest($1::uuid[], $2::timestamptz[]))`,
        [orgEmptied.map((e) => e.orgId), orgEmptied.map((e) => e.hour)],
      )
    }
    await upsertTopics(client, hourlyTopics, dailyTopics)
    await upsertLanguages(client, hourlyLanguages)
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
 * Adds topic deltas per hour and per day, in one statement; a count taken back to zero (re-analysis,
 * erasure) disappears rather than listing as 0.
 */
async function upsertTopics(
  client: pg.ClientBase,
  hourly: readonly TopicDelta[],
  daily: readonly TopicDelta[],
): Promise<void> {
  if (hourly.length === 0 && daily.length === 0) return
  const columns = (t: readonly TopicDelta[]) => [
    t.map((x) => x.orgId),
    t.map((x) => x.chatbotId),
    t.map((x) => x.hour),
    t.map((x) => x.topic),
    t.map((x) => x.n),
    t.map((x) => x.sentimentSum),
  ]
  const types = ['uuid', 'uuid', 'timestamptz', 'text', 'int', 'float8']
  const unnest = (from: number) => `unnest(${types.map((t, i) => `$${from + i}::${t}[]`).join(', ')})`
  await client.query({
    name: 'cas-rollups-topics',
    text: `WITH h AS (
       INSERT INTO rm_hourly_topics AS t (org_id, chatbot_id, hour, topic, messages, sentiment_sum)
       SELECT * FROM ${unnest(1)}
       ON CONFLICT (chatbot_id, hour, topic) DO UPDATE SET messages = t.messages + EXCLUDED.messages,
         sentiment_sum = t.sentiment_sum + EXCLUDED.sentiment_sum
     ), d AS (
       INSERT INTO rm_daily_topics AS t (org_id, chatbot_id, day, topic, messages, sentiment_sum)
       SELECT * FROM ${unnest(7)}
       ON CONFLICT (chatbot_id, day, topic) DO UPDATE SET messages = t.messages + EXCLUDED.messages,
         sentiment_sum = t.sentiment_sum + EXCLUDED.sentiment_sum
     ) SELECT`,
    values: [...columns(hourly), ...columns(daily)],
  })
  const lowered = (t: readonly TopicDelta[]) => t.filter((x) => x.n < 0)
  for (const [table, period, rows] of [
    ['rm_hourly_topics', 'hour', lowered(hourly)],
    ['rm_daily_topics', 'day', lowered(daily)],
  ] as const) {
    if (rows.length === 0) continue
    await client.query(
      `DELETE FROM ${table} WHERE messages <= 0
         AND (chatbot_id, ${period}, topic) IN (SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[]))`,
      [rows.map((t) => t.chatbotId), rows.map((t) => t.hour), rows.map((t) => t.topic)],
    )
  }
}

/**
 * Adds language deltas per hour, in one statement, in key order; a count taken back to zero
 * (re-analysis, erasure) disappears rather than listing as 0.
 */
async function upsertLanguages(client: pg.ClientBase, hourly: readonly LanguageDelta[]): Promise<void> {
  if (hourly.length === 0) return
  await client.query({
    name: 'cas-rollups-languages',
    text: `INSERT INTO rm_hourly_languages AS l (org_id, chatbot_id, hour, language, messages)
           SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[], $5::int[])
           ON CONFLICT (chatbot_id, hour, language) DO UPDATE SET messages = l.messages + EXCLUDED.messages`,
    values: [
      hourly.map((l) => l.orgId),
      hourly.map((l) => l.chatbotId),
      hourly.map((l) => l.hour),
      hourly.map((l) => l.language),
      hourly.map((l) => l.n),
    ],
  })
  const lowered = hourly.filter((l) => l.n < 0)
  if (lowered.length === 0) return
  await client.query(
    `DELETE FROM rm_hourly_languages WHERE messages <= 0
       AND (chatbot_id, hour, language) IN (SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[]))`,
    [lowered.map((l) => l.chatbotId), lowered.map((l) => l.hour), lowered.map((l) => l.language)],
  )
}
