import type pg from 'pg'
import {
  type ActivityRow,
  applyUserHourDeltas,
  eraseActivity,
  type LastActiveDelta,
  lockEndUsers,
  removeChatbotUsers,
  upsertActivity,
} from './reach.ts'

/** A change to one hour's rollup row, added to what is there (negative to take back). */
export interface HourlyDelta {
  orgId: string
  chatbotId: string
  hour: string
  messages: number
  user: number
  assistant: number
  system: number
  tool: number
  /** End users' messages' sentiment. */
  sentimentSum: number
  sentimentCount: number
  positive: number
  neutral: number
  negative: number
  /** The assistant's messages' sentiment. */
  assistantSentimentSum: number
  assistantSentimentCount: number
  assistantPositive: number
  assistantNeutral: number
  assistantNegative: number
  /** Conversations and end users whose last active hour moves to (1) or away from (-1) this hour (reach.ts). */
  lastActiveConversations: number
  lastActiveUsers: number
}

export type Role = 'user' | 'assistant' | 'system' | 'tool'
export type SentimentLabel = 'positive' | 'neutral' | 'negative'

/** The UTC hour a timestamp falls in, as an ISO string. */
export function hourOf(timestamp: string | Date): string {
  const d = new Date(timestamp)
  d.setUTCMinutes(0, 0, 0)
  return d.toISOString()
}

/** The UTC day a timestamp falls in, as an ISO string. */
export function dayOf(timestamp: string | Date): string {
  const d = new Date(timestamp)
  d.setUTCHours(0, 0, 0, 0)
  return d.toISOString()
}

type Measure = Exclude<keyof HourlyDelta, 'orgId' | 'chatbotId' | 'hour'>
const MEASURES: readonly Measure[] = [
  'messages',
  'user',
  'assistant',
  'system',
  'tool',
  'sentimentSum',
  'sentimentCount',
  'positive',
  'neutral',
  'negative',
  'assistantSentimentSum',
  'assistantSentimentCount',
  'assistantPositive',
  'assistantNeutral',
  'assistantNegative',
  'lastActiveConversations',
  'lastActiveUsers',
]

const ASSISTANT_LABEL = {
  positive: 'assistantPositive',
  neutral: 'assistantNeutral',
  negative: 'assistantNegative',
} as const

function emptyDelta(orgId: string, chatbotId: string, hour: string): HourlyDelta {
  const row = { orgId, chatbotId, hour } as HourlyDelta
  for (const m of MEASURES) row[m] = 0
  return row
}

/**
 * Accumulates deltas per (chatbot, hour) so a batch writes each rollup row once: the chatbot's hourly
 * rollups, the organization's (rm_org_hourly_stats, the sum of its chatbots' plus its own count of last
 * active end users), topics per hour and per day, and activity with the distinct-count chains (reach.ts).
 */
export class RollupBatch {
  private readonly stats = new Map<string, HourlyDelta>()
  /** Organization-wide moves of last active end-user hours (chatbotId unused). */
  private readonly orgUsers = new Map<string, HourlyDelta>()
  private readonly topics = new Map<string, TopicDelta>()
  private readonly activity = new Map<string, ActivityRow>()

  private row(orgId: string, chatbotId: string, hour: string): HourlyDelta {
    const key = `${chatbotId}|${hour}`
    let row = this.stats.get(key)
    if (!row) {
      row = emptyDelta(orgId, chatbotId, hour)
      this.stats.set(key, row)
    }
    return row
  }

  private addLastActive(
    deltas: readonly LastActiveDelta[],
    field: 'lastActiveConversations' | 'lastActiveUsers',
  ) {
    for (const d of deltas) {
      if (d.chatbotId !== null) {
        this.row(d.orgId, d.chatbotId, d.hour)[field] += d.delta
      } else {
        const key = `${d.orgId}|${d.hour}`
        const row = this.orgUsers.get(key) ?? emptyDelta(d.orgId, '', d.hour)
        row.lastActiveUsers += d.delta
        this.orgUsers.set(key, row)
      }
    }
  }

  /** Counts (sign 1) or takes back (sign -1) one message in its hour. */
  addMessage(orgId: string, chatbotId: string, hour: string, role: Role, sign: 1 | -1 = 1): void {
    const row = this.row(orgId, chatbotId, hour)
    row.messages += sign
    row[role] += sign
  }

  /**
   * Adds (sign 1) or takes back (sign -1) one message's sentiment and topics in its hour: an end user's
   * into the end users' figures and its topics (with their sentiment), an assistant's into the
   * assistant's; system and tool messages' results count nowhere (and no message but an end user's
   * has topics: older results' topics of other roles are left out).
   */
  addAnalysis(
    orgId: string,
    chatbotId: string,
    hour: string,
    role: Role,
    sentiment: { score: number; label: SentimentLabel },
    topics: readonly string[],
    sign: 1 | -1,
  ): void {
    if (role !== 'user' && role !== 'assistant') return
    const row = this.row(orgId, chatbotId, hour)
    if (role === 'assistant') {
      row.assistantSentimentSum += sign * sentiment.score
      row.assistantSentimentCount += sign
      row[ASSISTANT_LABEL[sentiment.label]] += sign
      return
    }
    row.sentimentSum += sign * sentiment.score
    row.sentimentCount += sign
    row[sentiment.label] += sign
    for (const topic of topics) {
      const key = `${chatbotId}|${hour}|${topic}`
      const entry = this.topics.get(key) ?? { orgId, chatbotId, hour, topic, n: 0, sentimentSum: 0 }
      entry.n += sign
      entry.sentimentSum += sign * sentiment.score
      this.topics.set(key, entry)
    }
  }

  addActivity(
    orgId: string,
    chatbotId: string,
    hour: string,
    conversationId: string,
    endUserId: string | null,
  ) {
    const key = `${chatbotId}|${hour}|${conversationId}`
    // As the upsert does: a row keeps its end user when a later one comes without.
    endUserId ??= this.activity.get(key)?.endUserId ?? null
    this.activity.set(key, { orgId, chatbotId, hour, conversationId, endUserId })
  }

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
    this.addLastActive(await removeChatbotUsers(client, orgId, chatbotId), 'lastActiveUsers')
    await client.query(
      `INSERT INTO rm_org_hourly_stats AS o (org_id, hour, messages, user_messages, assistant_messages,
         system_messages, tool_messages, sentiment_sum, sentiment_count, positive, neutral, negative,
         assistant_sentiment_sum, assistant_sentiment_count, assistant_positive, assistant_neutral,
         assistant_negative, last_active_conversations)
       SELECT org_id, hour, -messages, -user_messages, -assistant_messages, -system_messages, -tool_messages,
              -sentiment_sum, -sentiment_count, -positive, -neutral, -negative, -assistant_sentiment_sum,
              -assistant_sentiment_count, -assistant_positive, -assistant_neutral, -assistant_negative,
              -last_active_conversations
         FROM rm_hourly_stats WHERE chatbot_id = $1 ORDER BY hour
       ON CONFLICT (org_id, hour) DO UPDATE SET ${ADD_TO}`,
      [chatbotId],
    )
    await this.flush(client)
    await client.query('DELETE FROM rm_org_hourly_stats WHERE org_id = $1 AND messages <= 0', [orgId])
  }

  /** Writes the accumulated deltas: one multi-row statement per table. */
  async flush(client: pg.ClientBase): Promise<void> {
    const activity = [...this.activity.values()]
    this.activity.clear()
    if (activity.length > 0) await this.flushActivity(client, activity)

    const stats = [...this.stats.values()].sort(byKey)
    const org = new Map<string, HourlyDelta>()
    for (const s of stats) {
      const key = `${s.orgId}|${s.hour}`
      const row = org.get(key) ?? emptyDelta(s.orgId, '', s.hour)
      // The organization's last active users are its own (an end user of two chatbots is one).
      for (const m of MEASURES) if (m !== 'lastActiveUsers') row[m] += s[m]
      org.set(key, row)
    }
    for (const [key, u] of this.orgUsers) {
      const row = org.get(key) ?? emptyDelta(u.orgId, '', u.hour)
      row.lastActiveUsers += u.lastActiveUsers
      org.set(key, row)
    }
    const orgStats = [...org.values()].sort(byKey)
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
    const hourly = [...this.topics.values()].filter((t) => t.n !== 0 || t.sentimentSum !== 0).sort(byTopicKey)
    const daily = new Map<string, TopicDelta>()
    for (const t of hourly) {
      const day = dayOf(t.hour)
      const key = `${t.chatbotId}|${day}|${t.topic}`
      const entry = daily.get(key) ?? { ...t, hour: day, n: 0, sentimentSum: 0 }
      entry.n += t.n
      entry.sentimentSum += t.sentimentSum
      daily.set(key, entry)
    }
    await upsertTopics(
      client,
      hourly,
      [...daily.values()].filter((t) => t.n !== 0 || t.sentimentSum !== 0).sort(byTopicKey),
    )
    this.stats.clear()
    this.orgUsers.clear()
    this.topics.clear()
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

interface TopicDelta {
  orgId: string
  chatbotId: string
  hour: string
  topic: string
  n: number
  sentimentSum: number
}

// One order for the rows every batch upserts, so that two projector instances adding to the same rows
// lock them in the same order (never a deadlock). Code-unit order: the same in every process.
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const byKey = (a: HourlyDelta, b: HourlyDelta) =>
  compare(a.orgId, b.orgId) || compare(a.chatbotId, b.chatbotId) || compare(a.hour, b.hour)
const byTopicKey = (a: TopicDelta, b: TopicDelta) =>
  compare(a.chatbotId, b.chatbotId) || compare(a.hour, b.hour) || compare(a.topic, b.topic)

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
