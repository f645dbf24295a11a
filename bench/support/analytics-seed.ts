import type pg from 'pg'
import { uuidFrom } from './sql.ts'

/**
 * The read-model rows a year of `messages` leaves for one organization, written with SQL: the hourly
 * rollups and activity rows the analytics read, what the projector derives from them (the organization's
 * hourly rollups, daily topics, the chains of active hours behind the distinct counts: see
 * migrations/0013_analytics-reach.sql), and the conversations the conversation list reads. Spread evenly
 * over the chatbots and the 8,760 hours before `now`; a conversation has 10 messages within one hour; an
 * end user has three conversations, months apart (returning users). Messages themselves (rm_messages) are
 * not written: neither the analytics nor the conversation list (without full-text search) read them.
 */
export async function seedReadModels(
  pool: pg.Pool,
  opts: { orgId: string; chatbotIds: readonly string[]; messages: number; now: Date },
): Promise<void> {
  const { orgId, chatbotIds, messages, now } = opts
  await pool.query(`TRUNCATE ${[...BASE_TABLES, ...DERIVED_TABLES].join(', ')}`)
  const hours = 365 * 24
  const perHour = messages / (hours * chatbotIds.length)
  const conversations = Math.round(messages / 10)
  // End user u has conversations u, u + users and u + 2 × users: far apart in the year.
  const users = Math.max(1, Math.round(conversations / 3))
  await pool.query(
    `INSERT INTO rm_hourly_stats (org_id, chatbot_id, hour, messages, user_messages, assistant_messages,
       sentiment_sum, sentiment_count, positive, neutral, negative)
     SELECT $1, c, $2::timestamptz - make_interval(hours => h), m, m / 2, m - m / 2, m * 0.1, m, m / 3, m / 3, m - 2 * (m / 3)
       FROM unnest($3::uuid[]) c, generate_series(1, $4) h, LATERAL (SELECT round($5 * (0.5 + random()))::int AS m) x`,
    [orgId, now, chatbotIds, hours, perHour],
  )
  await pool.query(
    `INSERT INTO rm_hourly_topics (org_id, chatbot_id, hour, topic, messages)
     SELECT org_id, chatbot_id, hour, t, greatest(1, messages / 4) FROM rm_hourly_stats,
            unnest(ARRAY['billing', 'shipping', 'login', 'refunds']) t WHERE random() < 0.75`,
  )
  // Conversation i: chatbot i mod n, in hour 1 + (i div n) mod 8,760 before now, end user i mod users.
  await pool.query(
    `INSERT INTO rm_hourly_activity (org_id, chatbot_id, hour, conversation_id, end_user_id)
     SELECT $1, ($2::uuid[])[1 + i % $3], $4::timestamptz - make_interval(hours => 1 + (i / $3) % $5),
            ${uuidFrom('i::text')}, 'user-' || (i % $7)
       FROM generate_series(0, $6 - 1) i`,
    [orgId, chatbotIds, chatbotIds.length, now, hours, conversations, users],
  )
  await pool.query(
    `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, end_user, session, message_count,
       first_message_at, last_message_at, created_at, updated_at, sentiment_score, sentiment_label, topics,
       stream_version)
     SELECT ${uuidFrom('i::text')}, $1, ($2::uuid[])[1 + i % $3], 'conv-' || i,
            jsonb_build_object('id', 'user-' || (i % $7), 'plan', 'pro'), '{"device": "desktop"}', 10,
            at, at + interval '5 minutes', at, at + interval '5 minutes', s,
            CASE WHEN s > 0.05 THEN 'positive' WHEN s < -0.05 THEN 'negative' ELSE 'neutral' END,
            CASE i % 4 WHEN 0 THEN ARRAY['billing'] WHEN 1 THEN ARRAY['shipping', 'refunds']
                       WHEN 2 THEN ARRAY['login'] ELSE ARRAY[]::text[] END,
            4
       FROM generate_series(0, $6 - 1) i,
            LATERAL (SELECT $4::timestamptz - make_interval(hours => 1 + (i / $3) % $5, mins => i % 50) AS at,
                            round((random() * 2 - 1)::numeric, 2)::float8 AS s) x`,
    [orgId, chatbotIds, chatbotIds.length, now, hours, conversations, users],
  )
  for (const sql of DERIVE) await pool.query(sql)
  await pool.query(`VACUUM ANALYZE ${[...BASE_TABLES, ...DERIVED_TABLES].join(', ')}`)
}

const BASE_TABLES = ['rm_hourly_stats', 'rm_hourly_topics', 'rm_hourly_activity', 'rm_conversations']
const DERIVED_TABLES = [
  'rm_org_hourly_stats',
  'rm_daily_topics',
  'rm_chatbot_user_hours',
  'rm_org_user_hours',
  'rm_org_end_users',
]

/**
 * What the projector derives from the rows above, as migration 0013 fills it from existing read models
 * (the same statements). bench/support/analytics-seed.test.ts checks the result against a recomputation
 * from scratch, and the overview against distinct counts over the activity rows.
 */
const DERIVE = [
  `UPDATE rm_hourly_activity a SET next_hour = n.next_hour
     FROM (SELECT chatbot_id, hour, conversation_id,
                  lead(hour) OVER (PARTITION BY conversation_id ORDER BY hour) AS next_hour
             FROM rm_hourly_activity) n
    WHERE n.next_hour IS NOT NULL
      AND (a.chatbot_id, a.hour, a.conversation_id) = (n.chatbot_id, n.hour, n.conversation_id)`,
  `INSERT INTO rm_chatbot_user_hours (org_id, chatbot_id, end_user_id, hour, conversations, next_hour)
   SELECT org_id, chatbot_id, end_user_id, hour, count(*),
          lead(hour) OVER (PARTITION BY chatbot_id, end_user_id ORDER BY hour)
     FROM rm_hourly_activity WHERE end_user_id IS NOT NULL
    GROUP BY org_id, chatbot_id, end_user_id, hour`,
  `INSERT INTO rm_org_user_hours (org_id, end_user_id, hour, conversations, next_hour)
   SELECT org_id, end_user_id, hour, count(*), lead(hour) OVER (PARTITION BY org_id, end_user_id ORDER BY hour)
     FROM rm_hourly_activity WHERE end_user_id IS NOT NULL
    GROUP BY org_id, end_user_id, hour`,
  'INSERT INTO rm_org_end_users SELECT DISTINCT org_id, end_user_id FROM rm_org_user_hours',
  `UPDATE rm_hourly_stats s SET last_active_conversations = n.conversations, last_active_users = n.users
     FROM (SELECT chatbot_id, hour, sum(c) AS conversations, sum(u) AS users FROM (
             SELECT chatbot_id, hour, 1 AS c, 0 AS u FROM rm_hourly_activity WHERE next_hour IS NULL
             UNION ALL
             SELECT chatbot_id, hour, 0, 1 FROM rm_chatbot_user_hours WHERE next_hour IS NULL) x
            GROUP BY 1, 2) n
    WHERE (s.chatbot_id, s.hour) = (n.chatbot_id, n.hour)`,
  `INSERT INTO rm_org_hourly_stats
   SELECT org_id, hour, sum(messages), sum(user_messages), sum(assistant_messages), sum(system_messages),
          sum(tool_messages), sum(sentiment_sum), sum(sentiment_count), sum(positive), sum(neutral),
          sum(negative), sum(last_active_conversations), 0
     FROM rm_hourly_stats GROUP BY org_id, hour`,
  `UPDATE rm_org_hourly_stats s SET last_active_users = n.users
     FROM (SELECT org_id, hour, count(*) AS users FROM rm_org_user_hours WHERE next_hour IS NULL
            GROUP BY 1, 2) n
    WHERE (s.org_id, s.hour) = (n.org_id, n.hour)`,
  `INSERT INTO rm_daily_topics
   SELECT org_id, chatbot_id, date_trunc('day', hour, 'UTC'), topic, sum(messages)
     FROM rm_hourly_topics GROUP BY 1, 2, 3, 4`,
]
