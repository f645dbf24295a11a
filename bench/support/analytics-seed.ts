import type pg from 'pg'
import { uuidFrom } from './sql.ts'

/**
 * The read-model rows a year of `messages` leaves for one organization, written with SQL: the hourly
 * rollups and activity rows the analytics read, and the conversations the conversation list reads.
 * Spread evenly over the chatbots and the 8,760 hours before `now`; a conversation has 10 messages
 * within one hour; an end user has three conversations. Messages themselves (rm_messages) are not
 * written: neither the analytics nor the conversation list (without full-text search) read them.
 */
export async function seedReadModels(
  pool: pg.Pool,
  opts: { orgId: string; chatbotIds: readonly string[]; messages: number; now: Date },
): Promise<void> {
  const { orgId, chatbotIds, messages, now } = opts
  await pool.query('TRUNCATE rm_hourly_stats, rm_hourly_topics, rm_hourly_activity, rm_conversations')
  const hours = 365 * 24
  const perHour = messages / (hours * chatbotIds.length)
  const conversations = Math.round(messages / 10)
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
  // Conversation i: chatbot i mod n, in hour 1 + (i div n) mod 8,760 before now, end user i div 3.
  await pool.query(
    `INSERT INTO rm_hourly_activity (org_id, chatbot_id, hour, conversation_id, end_user_id)
     SELECT $1, ($2::uuid[])[1 + i % $3], $4::timestamptz - make_interval(hours => 1 + (i / $3) % $5),
            ${uuidFrom('i::text')}, 'user-' || (i / 3)
       FROM generate_series(0, $6 - 1) i`,
    [orgId, chatbotIds, chatbotIds.length, now, hours, conversations],
  )
  await pool.query(
    `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, end_user, session, message_count,
       first_message_at, last_message_at, created_at, updated_at, sentiment_score, sentiment_label, topics,
       stream_version)
     SELECT ${uuidFrom('i::text')}, $1, ($2::uuid[])[1 + i % $3], 'conv-' || i,
            jsonb_build_object('id', 'user-' || (i / 3), 'plan', 'pro'), '{"device": "desktop"}', 10,
            at, at + interval '5 minutes', at, at + interval '5 minutes', s,
            CASE WHEN s > 0.05 THEN 'positive' WHEN s < -0.05 THEN 'negative' ELSE 'neutral' END,
            CASE i % 4 WHEN 0 THEN ARRAY['billing'] WHEN 1 THEN ARRAY['shipping', 'refunds']
                       WHEN 2 THEN ARRAY['login'] ELSE ARRAY[]::text[] END,
            4
       FROM generate_series(0, $6 - 1) i,
            LATERAL (SELECT $4::timestamptz - make_interval(hours => 1 + (i / $3) % $5, mins => i % 50) AS at,
                            round((random() * 2 - 1)::numeric, 2)::float8 AS s) x`,
    [orgId, chatbotIds, chatbotIds.length, now, hours, conversations],
  )
  await pool.query('VACUUM ANALYZE rm_hourly_stats, rm_hourly_topics, rm_hourly_activity, rm_conversations')
}
