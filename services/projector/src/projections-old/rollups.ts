import type pg from 'pg'

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
  sentimentSum: number
  sentimentCount: number
  positive: number
  neutral: number
  negative: number
}

export type Role = 'user' | 'assistant' | 'system' | 'tool'
export type SentimentLabel = 'positive' | 'neutral' | 'negative'

/** The UTC hour a timestamp falls in, as an ISO string. */
export function hourOf(timestamp: string | Date): string {
  const d = new Date(timestamp)
  d.setUTCMinutes(0, 0, 0)
  return d.toISOString()
}

/** Accumulates deltas per (chatbot, hour) so a batch writes each rollup row once. */
export class RollupBatch {
  private readonly stats = new Map<string, HourlyDelta>()
  private readonly topics = new Map<
    string,
    { orgId: string; chatbotId: string; hour: string; topic: string; n: number }
  >()
  private readonly activity = new Map<
    string,
    { orgId: string; chatbotId: string; hour: string; conversationId: string; endUserId: string | null }
  >()

  private row(orgId: string, chatbotId: string, hour: string): HourlyDelta {
    const key = `${chatbotId}|${hour}`
    let row = this.stats.get(key)
    if (!row) {
      row = {
        orgId,
        chatbotId,
        hour,
        messages: 0,
        user: 0,
        assistant: 0,
        system: 0,
        tool: 0,
        sentimentSum: 0,
        sentimentCount: 0,
        positive: 0,
        neutral: 0,
        negative: 0,
      }
      this.stats.set(key, row)
    }
    return row
  }

  /** Counts (sign 1) or takes back (sign -1) one message in its hour. */
  addMessage(orgId: string, chatbotId: string, hour: string, role: Role, sign: 1 | -1 = 1): void {
    const row = this.row(orgId, chatbotId, hour)
    row.messages += sign
    row[role] += sign
  }

  /** Adds (sign 1) or takes back (sign -1) one message's sentiment and topics in its hour. */
  addAnalysis(
    orgId: string,
    chatbotId: string,
    hour: string,
    sentiment: { score: number; label: SentimentLabel },
    topics: readonly string[],
    sign: 1 | -1,
  ): void {
    const row = this.row(orgId, chatbotId, hour)
    row.sentimentSum += sign * sentiment.score
    row.sentimentCount += sign
    row[sentiment.label] += sign
    for (const topic of topics) {
      const key = `${chatbotId}|${hour}|${topic}`
      const entry = this.topics.get(key) ?? { orgId, chatbotId, hour, topic, n: 0 }
      entry.n += sign
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
    this.activity.set(`${chatbotId}|${hour}|${conversationId}`, {
      orgId,
      chatbotId,
      hour,
      conversationId,
      endUserId,
    })
  }

  /** Writes the accumulated deltas: one multi-row statement per rollup table. */
  async flush(client: pg.ClientBase): Promise<void> {
    const stats = [...this.stats.values()]
    if (stats.length > 0) {
      const col = <K extends keyof HourlyDelta>(k: K) => stats.map((s) => s[k])
      await client.query(
        `INSERT INTO rm_hourly_stats AS h (org_id, chatbot_id, hour, messages, user_messages, assistant_messages,
           system_messages, tool_messages, sentiment_sum, sentiment_count, positive, neutral, negative)
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::int[], $5::int[], $6::int[], $7::int[],
                              $8::int[], $9::float8[], $10::int[], $11::int[], $12::int[], $13::int[])
         ON CONFLICT (chatbot_id, hour) DO UPDATE SET
           messages = h.messages + EXCLUDED.messages,
           user_messages = h.user_messages + EXCLUDED.user_messages,
           assistant_messages = h.assistant_messages + EXCLUDED.assistant_messages,
           system_messages = h.system_messages + EXCLUDED.system_messages,
           tool_messages = h.tool_messages + EXCLUDED.tool_messages,
           sentiment_sum = h.sentiment_sum + EXCLUDED.sentiment_sum,
           sentiment_count = h.sentiment_count + EXCLUDED.sentiment_count,
           positive = h.positive + EXCLUDED.positive,
           neutral = h.neutral + EXCLUDED.neutral,
           negative = h.negative + EXCLUDED.negative`,
        [
          col('orgId'),
          col('chatbotId'),
          col('hour'),
          col('messages'),
          col('user'),
          col('assistant'),
          col('system'),
          col('tool'),
          col('sentimentSum'),
          col('sentimentCount'),
          col('positive'),
          col('neutral'),
          col('negative'),
        ],
      )
    }
    // An hour emptied by an erasure disappears, as if its messages had never come (a rebuild agrees).
    const emptied = stats.filter((s) => s.messages < 0)
    if (emptied.length > 0) {
      await client.query(
        `DELETE FROM rm_hourly_stats WHERE messages <= 0
           AND (chatbot_id, hour) IN (SELECT * FROM unnest($1::uuid[], $2::timestamptz[]))`,
        [emptied.map((e) => e.chatbotId), emptied.map((e) => e.hour)],
      )
    }
    const topics = [...this.topics.values()].filter((t) => t.n !== 0)
    if (topics.length > 0) {
      await client.query(
        `INSERT INTO rm_hourly_topics AS t (org_id, chatbot_id, hour, topic, messages)
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[], $5::int[])
         ON CONFLICT (chatbot_id, hour, topic) DO UPDATE SET messages = t.messages + EXCLUDED.messages`,
        [
          topics.map((t) => t.orgId),
          topics.map((t) => t.chatbotId),
          topics.map((t) => t.hour),
          topics.map((t) => t.topic),
          topics.map((t) => t.n),
        ],
      )
      // A topic count taken back to zero (re-analysis) disappears rather than listing as 0.
      const lowered = topics.filter((t) => t.n < 0)
      if (lowered.length > 0) {
        await client.query(
          `DELETE FROM rm_hourly_topics WHERE messages <= 0
             AND (chatbot_id, hour, topic) IN (SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[]))`,
          [lowered.map((t) => t.chatbotId), lowered.map((t) => t.hour), lowered.map((t) => t.topic)],
        )
      }
    }
    const activity = [...this.activity.values()]
    if (activity.length > 0) {
      await client.query(
        `INSERT INTO rm_hourly_activity (org_id, chatbot_id, hour, conversation_id, end_user_id)
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::uuid[], $5::text[])
         ON CONFLICT (chatbot_id, hour, conversation_id) DO UPDATE
           SET end_user_id = coalesce(EXCLUDED.end_user_id, rm_hourly_activity.end_user_id)`,
        [
          activity.map((a) => a.orgId),
          activity.map((a) => a.chatbotId),
          activity.map((a) => a.hour),
          activity.map((a) => a.conversationId),
          activity.map((a) => a.endUserId),
        ],
      )
    }
    this.stats.clear()
    this.topics.clear()
    this.activity.clear()
  }
}
