import { UNDETERMINED_LANGUAGE } from '@cas/events'
import type pg from 'pg'

/**
 * What the analytics structures of migration 0013 must hold, recomputed from scratch: from the activity
 * rows (one per chatbot, hour and conversation, with its end user) and the hourly rollups per chatbot;
 * and the hourly language counts of migration 0061, from the messages.
 * Each entry: the stored rows of one table (or its derived columns) and the same recomputed by brute
 * force. Used to check the projector's incremental upkeep and the benchmark's seed.
 */
const CHECKS: Record<string, { stored: string; expected: string }> = {
  'rm_hourly_activity.next_hour': {
    stored: 'SELECT chatbot_id, hour, conversation_id, next_hour, gap_class FROM rm_hourly_activity',
    expected: `SELECT chatbot_id, hour, conversation_id, next_hour,
                      floor(log(2, extract(epoch FROM next_hour - hour) / 3600))::smallint AS gap_class
                 FROM (SELECT *, lead(hour) OVER (PARTITION BY conversation_id ORDER BY hour) AS next_hour
                         FROM (SELECT chatbot_id, hour, conversation_id FROM rm_hourly_activity) a) x`,
  },
  rm_chatbot_user_hours: {
    stored:
      'SELECT org_id, chatbot_id, end_user_id, hour, conversations, next_hour FROM rm_chatbot_user_hours',
    expected: `SELECT org_id, chatbot_id, end_user_id, hour, count(*)::int,
                      lead(hour) OVER (PARTITION BY chatbot_id, end_user_id ORDER BY hour)
                 FROM rm_hourly_activity WHERE end_user_id IS NOT NULL
                GROUP BY org_id, chatbot_id, end_user_id, hour`,
  },
  rm_org_user_hours: {
    stored: 'SELECT org_id, end_user_id, hour, conversations, next_hour FROM rm_org_user_hours',
    expected: `SELECT org_id, end_user_id, hour, count(*)::int,
                      lead(hour) OVER (PARTITION BY org_id, end_user_id ORDER BY hour)
                 FROM rm_hourly_activity WHERE end_user_id IS NOT NULL GROUP BY org_id, end_user_id, hour`,
  },
  rm_org_end_users: {
    stored: 'SELECT org_id, end_user_id FROM rm_org_end_users',
    expected: 'SELECT DISTINCT org_id, end_user_id FROM rm_hourly_activity WHERE end_user_id IS NOT NULL',
  },
  'rm_hourly_stats.last_active_*': {
    stored: `SELECT chatbot_id, hour, last_active_conversations, last_active_users FROM rm_hourly_stats
              WHERE last_active_conversations <> 0 OR last_active_users <> 0`,
    expected: `SELECT chatbot_id, hour, sum(c)::int, sum(u)::int FROM (
                 SELECT chatbot_id, hour, 1 AS c, 0 AS u
                   FROM (SELECT chatbot_id, hour,
                                lead(hour) OVER (PARTITION BY conversation_id ORDER BY hour) AS next_hour
                           FROM rm_hourly_activity) a WHERE next_hour IS NULL
                 UNION ALL
                 SELECT chatbot_id, hour, 0, 1
                   FROM (SELECT chatbot_id, hour,
                                lead(hour) OVER (PARTITION BY chatbot_id, end_user_id ORDER BY hour) AS next_hour
                           FROM (SELECT DISTINCT chatbot_id, end_user_id, hour FROM rm_hourly_activity
                                  WHERE end_user_id IS NOT NULL) d) u WHERE next_hour IS NULL) x
               GROUP BY chatbot_id, hour`,
  },
  rm_org_hourly_stats: {
    stored: `SELECT org_id, hour, messages, user_messages, assistant_messages, system_messages, tool_messages,
                    sentiment_sum, sentiment_count, positive, neutral, negative, assistant_sentiment_sum,
                    assistant_sentiment_count, assistant_positive, assistant_neutral, assistant_negative,
                    last_active_conversations, last_active_users
               FROM rm_org_hourly_stats`,
    expected: `SELECT s.*, coalesce(u.users, 0)::int FROM (
                 SELECT org_id, hour, sum(messages)::int, sum(user_messages)::int, sum(assistant_messages)::int,
                        sum(system_messages)::int, sum(tool_messages)::int, sum(sentiment_sum),
                        sum(sentiment_count)::int, sum(positive)::int, sum(neutral)::int, sum(negative)::int,
                        sum(assistant_sentiment_sum), sum(assistant_sentiment_count)::int,
                        sum(assistant_positive)::int, sum(assistant_neutral)::int, sum(assistant_negative)::int,
                        sum(last_active_conversations)::int
                   FROM rm_hourly_stats GROUP BY org_id, hour) s
               LEFT JOIN (SELECT org_id, hour, count(*) AS users
                            FROM (SELECT org_id, hour,
                                         lead(hour) OVER (PARTITION BY org_id, end_user_id ORDER BY hour) AS next_hour
                                    FROM (SELECT DISTINCT org_id, end_user_id, hour FROM rm_hourly_activity
                                           WHERE end_user_id IS NOT NULL) d) n
                           WHERE next_hour IS NULL GROUP BY org_id, hour) u USING (org_id, hour)`,
  },
  rm_daily_topics: {
    stored: 'SELECT org_id, chatbot_id, day, topic, messages, sentiment_sum FROM rm_daily_topics',
    expected: `SELECT org_id, chatbot_id, date_trunc('day', hour, 'UTC'), topic, sum(messages)::int, sum(sentiment_sum)
                 FROM rm_hourly_topics GROUP BY 1, 2, 3, 4`,
  },
  // The end users' messages of each detected language, per hour (the overview's language share).
  rm_hourly_languages: {
    stored: 'SELECT org_id, chatbot_id, hour, language, messages FROM rm_hourly_languages',
    expected: `SELECT org_id, chatbot_id, date_trunc('hour', sent_at, 'UTC'), language, count(*)::int
                 FROM rm_messages
                WHERE role = 'user' AND sent_at IS NOT NULL AND language IS NOT NULL AND language <> '${UNDETERMINED_LANGUAGE}'
                GROUP BY 1, 2, 3, 4`,
  },
  // Every hour with activity has its rollup row, and no row is left empty.
  'rm_hourly_stats rows': {
    stored: 'SELECT chatbot_id, hour FROM rm_hourly_stats',
    expected: `SELECT DISTINCT chatbot_id, hour FROM rm_hourly_activity
               UNION SELECT chatbot_id, hour FROM rm_hourly_stats WHERE messages > 0`,
  },
}

/**
 * The differences between the stored analytics structures and their recomputation: for each check that
 * differs, the rows only stored and the rows only expected (as JSON). `{}` when everything agrees.
 */
export async function derivedRollupDifferences(
  db: pg.Pool | pg.ClientBase,
): Promise<Record<string, { onlyStored: unknown[]; onlyExpected: unknown[] }>> {
  const differences: Record<string, { onlyStored: unknown[]; onlyExpected: unknown[] }> = {}
  for (const [name, { stored, expected }] of Object.entries(CHECKS)) {
    const { rows } = await db.query<{ side: 'stored' | 'expected'; row: unknown }>(
      `WITH stored AS (${stored}), expected AS (${expected})
       SELECT 'stored' AS side, to_jsonb(x) AS row FROM (TABLE stored EXCEPT ALL TABLE expected) x
       UNION ALL
       SELECT 'expected', to_jsonb(x) FROM (TABLE expected EXCEPT ALL TABLE stored) x`,
    )
    if (rows.length > 0) {
      differences[name] = {
        onlyStored: rows.filter((r) => r.side === 'stored').map((r) => r.row),
        onlyExpected: rows.filter((r) => r.side === 'expected').map((r) => r.row),
      }
    }
  }
  return differences
}

/**
 * The overview's language share as it was read before migration 0061's rollup (services/query/src/repositories/
 * languages.ts then): the range's end-user messages counted from rm_messages. $1 the organization, [$2, $3) the
 * range, $4 a chatbot or null. The tests compare the rollup's answers and reads with it.
 */
export const LANGUAGES_FROM_MESSAGES = `SELECT m.language, count(*)::float8 AS messages
       FROM rm_chatbots b
       JOIN rm_messages m ON m.chatbot_id = b.id AND m.role = 'user'
        AND m.sent_at >= $2 AND m.sent_at < $3 AND m.language IS NOT NULL AND m.language <> '${UNDETERMINED_LANGUAGE}'
      WHERE b.org_id = $1 AND ($4::uuid IS NULL OR b.id = $4)
      GROUP BY m.language
      ORDER BY messages DESC, m.language`
