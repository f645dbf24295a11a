import { UNDETERMINED_LANGUAGE } from '@cas/events'
import type pg from 'pg'
import { uuidFrom } from './sql.ts'

/** What seedTopicsPage wrote: the chatbot's topic and theme ids, for checks and requests. */
export interface TopicsSeed {
  readonly conversations: number
  readonly topics: number
  readonly themes: number
}

/** Canonical topics, topics merged into one of them, and themes, as a CLINC150-sized chatbot has them. */
export const SEED_TOPICS = 150
export const SEED_MERGED = 20
export const SEED_THEMES = 12

/** The read-model tables seedTopicsPage writes (emptied first). */
export const TOPICS_PAGE_TABLES = [
  'rm_conversations',
  'rm_messages',
  'rm_hourly_activity',
  'rm_hourly_topics',
  'rm_daily_topics',
  'rm_hourly_languages',
  'rm_topics',
  'rm_themes',
  'rm_conversation_signals',
  'rm_signals_decided',
  'rm_topic_reclustering',
] as const

/**
 * The read-model rows behind the Topics page of one chatbot of `conversations` conversations, written
 * with SQL as the projector leaves them: 150 topics (rm_topics; 20 more merged into them, one hidden),
 * 12 themes of 12 topics each (rm_themes; 6 topics in none), the conversations spread over the 30 days
 * before `now`, each with one end-user message per topic it is in (one topic for most, two or three for
 * some, a merged topic's id for some, "other" for 8 %) and an assistant reply, the hourly activity and
 * topic and language rollups those messages make (rm_hourly_activity, rm_hourly_topics, rm_daily_topics,
 * rm_hourly_languages), signals for
 * a fifth of them (rm_conversation_signals), when their signals were decided (rm_signals_decided) and the chatbot's re-clustering row. Topic popularity is
 * skewed (topic k about 1/(k+10)), as discovered topics are. Deterministic: the same arguments, the same
 * rows. `analyze`: ANALYZE the tables afterwards (as autovacuum eventually does); without it they keep
 * whatever statistics they had, none on a fresh database: the state of a chatbot's first hours.
 */
export async function seedTopicsPage(
  pool: pg.Pool,
  opts: {
    orgId: string
    chatbotId: string
    conversations: number
    now: Date
    analyze: boolean
    /**
     * Another chatbot's rows beside those already written (the tables are not emptied first); its ids
     * (conversations, topics, themes) are derived with this prefix, so that they differ from the first's.
     */
    addTo?: { idPrefix: string }
  },
): Promise<TopicsSeed> {
  const { orgId, chatbotId, conversations, now } = opts
  if (!opts.addTo) await pool.query(`TRUNCATE ${TOPICS_PAGE_TABLES.join(', ')}`)
  const prefix = `'${(opts.addTo?.idPrefix ?? '').replace(/'/g, "''")}'`
  const topicId = (k: string) => `(${uuidFrom(`${prefix} || 'topic-' || ${k}`)})::text`
  await pool.query(
    `INSERT INTO rm_topics (org_id, chatbot_id, id, label, keywords, configured, canonical_id, discovered_at,
                            updated_at, hidden)
     SELECT $1, $2, ${topicId('k')}, 'topic ' || k, ARRAY['word' || k, 'term' || k], false,
            CASE WHEN k < $4::int THEN ${topicId('k')} ELSE ${topicId('(k * 7) % $4::int')} END,
            $3::timestamptz - interval '31 days', $3::timestamptz - interval '31 days', k = 17
       FROM generate_series(0, $4::int + $5::int - 1) k`,
    [orgId, chatbotId, now, SEED_TOPICS, SEED_MERGED],
  )
  await pool.query(
    `INSERT INTO rm_themes (org_id, chatbot_id, id, label, topic_ids, position, updated_at)
     SELECT $1, $2, (${uuidFrom(`${prefix} || 'theme-' || j`)})::text, 'theme ' || j,
            ARRAY(SELECT ${topicId('k')} FROM generate_series(0, $4::int - 1) k
                   WHERE k % $5::int = j AND k < $5::int * ($4::int / $5::int) ORDER BY k),
            j, $3::timestamptz - interval '31 days'
       FROM generate_series(0, $5::int - 1) j`,
    [orgId, chatbotId, now, SEED_TOPICS - 6, SEED_THEMES],
  )
  // Conversation i: topics from a skewed pick (k = floor(10 × (171/10)^u) - 10, u uniform: about
  // 1/(k+10)); i % 25 < 7 has a second topic, i % 25 = 0 a third; i % 12 = 5 is in "other" only.
  await pool.query(
    `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, end_user, message_count,
       first_message_at, last_message_at, created_at, updated_at, sentiment_score, sentiment_label, topics,
       stream_version)
     SELECT ${uuidFrom(`${prefix} || 'conv-' || i`)}, $1, $2, 'conv-' || i, jsonb_build_object('id', 'user-' || (i % 9973)),
            2 * cardinality(t.topics), at, at + interval '4 minutes', at, at + interval '4 minutes', s,
            CASE WHEN s > 0.05 THEN 'positive' WHEN s < -0.05 THEN 'negative' ELSE 'neutral' END,
            t.topics, 6
       FROM generate_series(0, $4::int - 1) i,
            LATERAL (SELECT $3::timestamptz - make_interval(secs => 30 * 86400 * (i + 0.5) / $4::int) AS at,
                            round(sin(i * 1.7)::numeric, 2)::float8 AS s) x,
            LATERAL (SELECT CASE WHEN i % 12 = 5 THEN ARRAY['other']
                                 ELSE ARRAY(SELECT DISTINCT ${topicId('p.k')} FROM (
                                   SELECT floor(10 * power(($5::int + $6::int + 10) / 10.0, abs(sin(i * 12.9898 + n * 78.233)))) - 10 AS k
                                     FROM generate_series(0, CASE WHEN i % 25 = 0 THEN 2 WHEN i % 25 < 7 THEN 1 ELSE 0 END) n) p
                                   WHERE p.k BETWEEN 0 AND $5::int + $6::int - 1) END AS topics) t`,
    [orgId, chatbotId, now, conversations, SEED_TOPICS, SEED_MERGED],
  )
  // One end-user message per topic (a minute apart) and an assistant reply after each; the end user's
  // language as an English chatbot's read (lang1): "en" for 8 in 10, "und" for 1, "es" for 1.
  await pool.query(
    `INSERT INTO rm_messages (conversation_id, message_id, org_id, chatbot_id, role, content, sent_at, arrival,
                              sentiment_score, sentiment_label, topics, analyzer, language)
     SELECT c.id, r.role || '-' || n, c.org_id, c.chatbot_id, r.role,
            r.role || ' message ' || n || ' of ' || c.external_id || ' about ' || k.topic,
            c.first_message_at + make_interval(mins => n::int, secs => r.offs), 2 * n + r.offs,
            CASE WHEN r.role = 'user' THEN c.sentiment_score END,
            CASE WHEN r.role = 'user' THEN c.sentiment_label END,
            CASE WHEN r.role = 'user' THEN ARRAY[k.topic] ELSE '{}' END, 'bench',
            CASE WHEN r.role = 'user' THEN (ARRAY['en', 'en', 'en', 'en', 'en', 'en', 'en', 'en', '${UNDETERMINED_LANGUAGE}', 'es'])[
              1 + abs(hashtext(c.external_id || '-' || n)) % 10] END
       FROM rm_conversations c
       CROSS JOIN LATERAL unnest(c.topics) WITH ORDINALITY AS k(topic, n)
       CROSS JOIN (VALUES ('user', 0), ('assistant', 1)) r(role, offs)
      WHERE c.chatbot_id = $1`,
    [chatbotId],
  )
  await pool.query(
    `INSERT INTO rm_hourly_activity (org_id, chatbot_id, hour, conversation_id, end_user_id)
     SELECT DISTINCT m.org_id, m.chatbot_id, date_trunc('hour', m.sent_at, 'UTC'), m.conversation_id,
            c.end_user_id
       FROM rm_messages m JOIN rm_conversations c ON c.id = m.conversation_id
      WHERE m.chatbot_id = $1`,
    [chatbotId],
  )
  // Each conversation's hours chained as the projector keeps them (reach.ts: next_hour, its next hour).
  await pool.query(
    `UPDATE rm_hourly_activity a SET next_hour = n.next_hour
       FROM (SELECT chatbot_id, hour, conversation_id,
                    lead(hour) OVER (PARTITION BY conversation_id ORDER BY hour) AS next_hour
               FROM rm_hourly_activity WHERE chatbot_id = $1) n
      WHERE n.next_hour IS NOT NULL
        AND (a.chatbot_id, a.hour, a.conversation_id) = (n.chatbot_id, n.hour, n.conversation_id)`,
    [chatbotId],
  )
  await pool.query(
    `INSERT INTO rm_hourly_topics (org_id, chatbot_id, hour, topic, messages, sentiment_sum)
     SELECT org_id, chatbot_id, date_trunc('hour', sent_at, 'UTC'), t, count(*), sum(sentiment_score::numeric)
       FROM rm_messages CROSS JOIN LATERAL unnest(topics) t
      WHERE chatbot_id = $1 AND role = 'user'
      GROUP BY 1, 2, 3, 4`,
    [chatbotId],
  )
  await pool.query(
    `INSERT INTO rm_daily_topics (org_id, chatbot_id, day, topic, messages, sentiment_sum)
     SELECT org_id, chatbot_id, date_trunc('day', hour, 'UTC'), topic, sum(messages), sum(sentiment_sum)
       FROM rm_hourly_topics WHERE chatbot_id = $1 GROUP BY 1, 2, 3, 4`,
    [chatbotId],
  )
  // The end users' detected languages per hour (the overview's language share), as migration 0061 counts them.
  await pool.query(
    `INSERT INTO rm_hourly_languages (org_id, chatbot_id, hour, language, messages)
     SELECT org_id, chatbot_id, date_trunc('hour', sent_at, 'UTC'), language, count(*)
       FROM rm_messages
      WHERE chatbot_id = $1 AND role = 'user' AND language IS NOT NULL AND language <> '${UNDETERMINED_LANGUAGE}'
      GROUP BY 1, 2, 3, 4`,
    [chatbotId],
  )
  // A fifth of the conversations have a signal: bot failures, escalations, frustration, resolutions.
  await pool.query(
    `INSERT INTO rm_conversation_signals (org_id, chatbot_id, conversation_id, signal, confidence, evidence, analyzer)
     SELECT org_id, chatbot_id, id, s.signal, 0.8, ARRAY['user-1'], 'bench'
       FROM rm_conversations
       CROSS JOIN LATERAL (VALUES ('bot_failure', 0), ('escalation', 1), ('frustration', 2), ('resolution', 3)) s(signal, r)
      WHERE chatbot_id = $1 AND (hashtext(external_id) & 1023) % 20 = s.r`,
    [chatbotId],
  )
  // Every conversation's signals decided when its last message came (the projector's rm_signals_decided):
  // without them no conversation counts as checked for any signal, which no analysed chatbot reads.
  await pool.query(
    `INSERT INTO rm_signals_decided (conversation_id, org_id, chatbot_id, decided_at)
     SELECT id, org_id, chatbot_id, last_message_at FROM rm_conversations WHERE chatbot_id = $1`,
    [chatbotId],
  )
  await pool.query(
    `INSERT INTO rm_topic_reclustering (org_id, chatbot_id, settling, settling_since, last_reclustered_at, updated_at)
     VALUES ($1, $2, false, NULL, $3::timestamptz - interval '1 hour', $3::timestamptz - interval '1 hour')`,
    [orgId, chatbotId, now],
  )
  if (opts.analyze) await pool.query(`ANALYZE ${TOPICS_PAGE_TABLES.join(', ')}`)
  return { conversations, topics: SEED_TOPICS + SEED_MERGED, themes: SEED_THEMES }
}
