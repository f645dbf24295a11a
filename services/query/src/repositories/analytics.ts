import type pg from 'pg'
import type { Interval } from '../analytics/range.ts'
import { invalidQuery } from '../analytics/range.ts'
import { OTHER_TOPIC, OTHER_TOPIC_LABEL, rankTopics } from './topics.ts'

/**
 * Analytics read the rollups the projector keeps, never the messages (migrations/0005_read-models.sql,
 * 0013_analytics-reach.sql): hourly sums per chatbot (rm_hourly_stats) and per organization
 * (rm_org_hourly_stats), so a year is at most 8,784 rows whatever the traffic and however many chatbots;
 * topic counts per hour and per UTC day; and, for the distinct counts, the chains of active hours of each
 * conversation and end user (services/projector/src/projections/reach.ts). Every function runs on a
 * client inside withOrgScope, so row-level security confines it to the organization; the org_id
 * condition is still written out, for the indexes.
 */
export interface RollupScope {
  readonly orgId: string
  readonly chatbotId?: string | undefined
  /** Whole UTC hours: [from, to). */
  readonly from: Date
  readonly to: Date
}

export interface SentimentFigures {
  average: number | null
  positive: number
  neutral: number
  negative: number
  analyzed: number
}

export interface Overview {
  totalConversations: number
  totalMessages: number
  uniqueUsers: number
  avgMessagesPerConversation: number
  /** The end users' messages. */
  sentiment: SentimentFigures
  /** The assistant's messages. */
  assistantSentiment: SentimentFigures
  /** The topics of most conversations with a message in range, as ranked on the Topics page. */
  topTopics: { topic: string; id: string; count: number }[]
  /** "other", the long tail (conversations in no topic), apart as on the Topics page; null when none. */
  otherTopic: { topic: string; id: string; count: number } | null
  messagesByRole: { user: number; assistant: number; system: number; tool: number }
}

/** Whose messages a sentiment figure describes: the end user's (default) or the assistant's. */
export type SentimentRole = 'user' | 'assistant'

/** The rollup columns of each role's sentiment (the unprefixed ones are the end users'). */
const SENTIMENT_COLUMNS: Record<
  SentimentRole,
  { sum: string; count: string; positive: string; neutral: string; negative: string }
> = {
  user: {
    sum: 'sentiment_sum',
    count: 'sentiment_count',
    positive: 'positive',
    neutral: 'neutral',
    negative: 'negative',
  },
  assistant: {
    sum: 'assistant_sentiment_sum',
    count: 'assistant_sentiment_count',
    positive: 'assistant_positive',
    neutral: 'assistant_neutral',
    negative: 'assistant_negative',
  },
}

export interface SentimentPoint {
  bucket: string
  average: number | null
  positive: number
  neutral: number
  negative: number
  count: number
}

const TOP_TOPICS = 10

/**
 * The hourly rollup rows of the scope: the organization's own rows, or the chatbot's. Its params come
 * first and in this order ($1 org, $2 from, $3 to), so the bucket series below use $2 and $3, and callers
 * number their own parameters after these.
 */
function rollupFilter(scope: RollupScope): { table: string; where: string; params: unknown[] } {
  const params: unknown[] = [scope.orgId, scope.from.toISOString(), scope.to.toISOString()]
  let where = 'org_id = $1 AND hour >= $2::timestamptz AND hour < $3::timestamptz'
  if (scope.chatbotId === undefined) return { table: 'rm_org_hourly_stats', where, params }
  params.push(scope.chatbotId)
  where += ` AND chatbot_id = $${params.length}::uuid`
  return { table: 'rm_hourly_stats', where, params }
}

/**
 * Distinct-count classes: gap_class is floor(log2(hours to the next active hour)); hours span at most
 * the years 1970–9999 (range.ts), under 2^27 hours.
 */
const GAP_CLASSES = 26

/**
 * How many of a table's chains of active hours (one per conversation or end user) span `to` from an hour
 * in range: a row of gap class k spans it only if its next hour lies in [to, to + 2^(k+1) hours), so each
 * class is one short index range (a range ending now has none: their next hour would be in the future).
 * Parameters as rollupFilter's, the chatbot's as `chatbot`.
 */
function spanning(table: string, chatbot: string | null): string {
  return `(SELECT coalesce(sum(n), 0) FROM generate_series(0, ${GAP_CLASSES}) AS k,
            LATERAL (SELECT count(*) AS n FROM ${table} c
                      WHERE c.org_id = $1 AND c.gap_class = k
                        AND c.next_hour >= $3::timestamptz AND c.next_hour < $3::timestamptz + interval '1 hour' * 2 ^ (k + 1)
                        AND c.hour >= $2::timestamptz AND c.hour < $3::timestamptz
                        ${chatbot === null ? '' : `AND c.chatbot_id = ${chatbot}`}) s)`
}

/**
 * Sums arrive as float8: exact for any count below 2^53, and a JS number rather than the string pg makes
 * of a bigint. Averages are rounded to 4 decimals: re-analysis subtracts old scores from the hourly sums,
 * which leaves floating-point residue (0.30000000000000004) that is noise, not information.
 */
function average(sum: number, count: number): number | null {
  return count === 0 ? null : Math.round((sum / count) * 10_000) / 10_000
}

/**
 * Refuses a zone Postgres' AT TIME ZONE does not know. The query schema already checked the name against
 * Node's zone database; Postgres ships its own, which can lag or lead it by a release.
 */
export async function checkTimeZone(client: pg.ClientBase, tz: string): Promise<void> {
  try {
    await client.query('SELECT now() AT TIME ZONE $1::text', [tz])
  } catch (err) {
    // 22023 invalid_parameter_value: 'time zone "…" not recognized'.
    if ((err as { code?: string }).code === '22023') throw invalidQuery('tz', 'unknown time zone')
    throw err
  }
}

/**
 * Counts cover conversations (and end users) with a message in range, exactly: the chains of active hours
 * they have with their last active hour before `to` in range, i.e. the rollups' last-active counts summed
 * over the range, plus the chains spanning `to` (spanning()).
 */
export async function readOverview(client: pg.ClientBase, scope: RollupScope): Promise<Overview> {
  const { table, where, params } = rollupFilter(scope)
  const chatbot = scope.chatbotId === undefined ? null : `$${params.length}::uuid`
  const { rows: stats } = await client.query<Record<string, number>>(
    `SELECT coalesce(sum(messages), 0)::float8 AS messages, coalesce(sum(user_messages), 0)::float8 AS "user",
            coalesce(sum(assistant_messages), 0)::float8 AS assistant,
            coalesce(sum(system_messages), 0)::float8 AS system, coalesce(sum(tool_messages), 0)::float8 AS tool,
            coalesce(sum(sentiment_sum), 0)::float8 AS sentiment_sum,
            coalesce(sum(sentiment_count), 0)::float8 AS sentiment_count,
            coalesce(sum(positive), 0)::float8 AS positive, coalesce(sum(neutral), 0)::float8 AS neutral,
            coalesce(sum(negative), 0)::float8 AS negative,
            coalesce(sum(assistant_sentiment_sum), 0)::float8 AS assistant_sentiment_sum,
            coalesce(sum(assistant_sentiment_count), 0)::float8 AS assistant_sentiment_count,
            coalesce(sum(assistant_positive), 0)::float8 AS assistant_positive,
            coalesce(sum(assistant_neutral), 0)::float8 AS assistant_neutral,
            coalesce(sum(assistant_negative), 0)::float8 AS assistant_negative,
            (coalesce(sum(last_active_conversations), 0) + ${spanning('rm_hourly_activity', chatbot)})::float8
              AS conversations,
            (coalesce(sum(last_active_users), 0)
              + ${chatbot === null ? spanning('rm_org_user_hours', null) : spanning('rm_chatbot_user_hours', chatbot)})::float8
              AS users
       FROM ${table} WHERE ${where}`,
    params,
  )
  // Topics as the Topics page ranks them (rankTopics): by conversations with a message in range, in the
  // topic they count in now (a merged one in the one it merged into), labelled as now; a key phrase
  // (lexical analyzer) is its own label. "other", the long tail, is apart, as on the Topics page.
  const ranking = await rankTopics(client, scope)
  const topics = ranking.ranked
    .slice(0, TOP_TOPICS)
    .map((t) => ({ topic: t.label, id: t.id, count: t.conversations }))
  const other = ranking.other
    ? { topic: OTHER_TOPIC_LABEL, id: OTHER_TOPIC, count: ranking.other.conversations }
    : null
  const s = stats[0] ?? {}
  const get = (key: string) => s[key] ?? 0
  const conversations = get('conversations')
  return {
    totalConversations: conversations,
    totalMessages: get('messages'),
    uniqueUsers: get('users'),
    avgMessagesPerConversation:
      conversations === 0 ? 0 : Math.round((get('messages') / conversations) * 100) / 100,
    sentiment: {
      average: average(get('sentiment_sum'), get('sentiment_count')),
      positive: get('positive'),
      neutral: get('neutral'),
      negative: get('negative'),
      analyzed: get('sentiment_count'),
    },
    assistantSentiment: {
      average: average(get('assistant_sentiment_sum'), get('assistant_sentiment_count')),
      positive: get('assistant_positive'),
      neutral: get('assistant_neutral'),
      negative: get('assistant_negative'),
      analyzed: get('assistant_sentiment_count'),
    },
    topTopics: topics,
    otherTopic: other,
    messagesByRole: {
      user: get('user'),
      assistant: get('assistant'),
      system: get('system'),
      tool: get('tool'),
    },
  }
}

/** From an hour row's start to its last instant. */
const LAST_INSTANT = "(interval '1 hour' - interval '1 microsecond')"

/**
 * The bucket every hour row falls in, and the series of buckets, per interval.
 *
 * day / week: buckets are local calendar days (weeks from Monday, date_trunc's ISO week) in `tz`. The
 * series steps over local timestamps *without* time zone and converts each start with AT TIME ZONE, so a
 * DST day is 23 or 25 hours long, as it is on the wall clock. An hour row goes to the bucket its last
 * instant falls in, so a bucket starts at the UTC hour its local midnight falls in: in zones whose offset
 * is not whole hours (Asia/Kolkata, +05:30; Asia/Kathmandu, +05:45) a day's bucket counts from 23:30
 * (23:45) the evening before to 23:30 (23:45), an approximation of at most 30 (45) minutes at each edge,
 * the same at both, which resolveRange's rounding matches so that a range of whole local days has no
 * partial bucket before its first day or after its last. Where local midnight does not exist (a DST change
 * at 00:00, America/Santiago), Postgres converts it to the first instant of that day (01:00), which is
 * where the bucket then starts. A bucket is named by its local midnight. `$TZ` stands for the zone's
 * parameter, numbered once the other parameters are known.
 *
 * hour: buckets are the rollups' own UTC hours. They match local hours in whole-hour zones, and stay
 * distinct through the repeated local hour of a DST change; in other zones they start at :30 or :45 local.
 */
export const BUCKETS: Record<Interval, { series: string; key: string }> = {
  hour: {
    series: `SELECT b AS key, b AS bucket
               FROM generate_series($2::timestamptz, $3::timestamptz - interval '1 hour', interval '1 hour') AS b`,
    key: 'hour',
  },
  day: {
    series: `SELECT b AS key, b AT TIME ZONE $TZ AS bucket
               FROM generate_series(date_trunc('day', ($2::timestamptz + ${LAST_INSTANT}) AT TIME ZONE $TZ),
                                    date_trunc('day', ($3::timestamptz - interval '1 microsecond') AT TIME ZONE $TZ),
                                    interval '1 day') AS b`,
    key: `date_trunc('day', (hour + ${LAST_INSTANT}) AT TIME ZONE $TZ)`,
  },
  week: {
    series: `SELECT b AS key, b AT TIME ZONE $TZ AS bucket
               FROM generate_series(date_trunc('week', ($2::timestamptz + ${LAST_INSTANT}) AT TIME ZONE $TZ),
                                    date_trunc('week', ($3::timestamptz - interval '1 microsecond') AT TIME ZONE $TZ),
                                    interval '1 week') AS b`,
    key: `date_trunc('week', (hour + ${LAST_INSTANT}) AT TIME ZONE $TZ)`,
  },
}

/** One point per bucket of the range, empty ones included, in ascending order. */
export async function readSentimentPoints(
  client: pg.ClientBase,
  scope: RollupScope,
  interval: Interval,
  tz: string,
  role: SentimentRole = 'user',
): Promise<SentimentPoint[]> {
  const { table, where, params } = rollupFilter(scope)
  const c = SENTIMENT_COLUMNS[role]
  const { series, key } = BUCKETS[interval]
  // Only zoned buckets get the zone: Postgres refuses a parameter that no part of the statement uses.
  if (series.includes('$TZ')) params.push(tz)
  const tzParam = `$${params.length}::text`
  const { rows } = await client.query<{
    bucket: Date
    sentiment_sum: number | null
    count: number | null
    positive: number | null
    neutral: number | null
    negative: number | null
  }>(
    `WITH buckets AS (${series.replaceAll('$TZ', tzParam)}),
          sums AS (
            SELECT ${key.replaceAll('$TZ', tzParam)} AS key, sum(${c.sum})::float8 AS sentiment_sum,
                   sum(${c.count})::float8 AS count, sum(${c.positive})::float8 AS positive,
                   sum(${c.neutral})::float8 AS neutral, sum(${c.negative})::float8 AS negative
              FROM ${table} WHERE ${where}
             GROUP BY 1)
     SELECT b.bucket, s.sentiment_sum, s.count, s.positive, s.neutral, s.negative
       FROM buckets b LEFT JOIN sums s USING (key)
      ORDER BY b.key`,
    params,
  )
  return rows.map((r) => ({
    bucket: r.bucket.toISOString(),
    average: average(r.sentiment_sum ?? 0, r.count ?? 0),
    positive: r.positive ?? 0,
    neutral: r.neutral ?? 0,
    negative: r.negative ?? 0,
    count: r.count ?? 0,
  }))
}
