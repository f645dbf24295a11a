-- Up Migration

-- Topic discovery (issue 15): the analysis service finds each chatbot's topics from its end users'
-- messages with a sentence-embedding model (services/analysis/src/topics/). Its state, per chatbot, is
-- the analysis service's own (the write side); every change of it is also an event (analysis.topic-*),
-- from which the projector builds rm_topics below, so a replay rebuilds the same topics.

-- One row per chatbot whose topics are being discovered: locked by every commit that places its
-- messages, so topic decisions for one chatbot never interleave, across processes too.
CREATE TABLE topic_models (
  chatbot_id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  -- The embedding model (and version) the centroids below were made with: another model starts afresh.
  model text NOT NULL,
  -- A new value with every change: a process's cached copy with another token is stale.
  token uuid NOT NULL,
  seq bigint NOT NULL DEFAULT 0,
  added_since_clustering integer NOT NULL DEFAULT 0,
  pool_size_at_clustering integer NOT NULL DEFAULT 0
);

-- The topics: the sum of their members' embeddings (float32, little-endian), how many, and the counts
-- of the terms their labels are made of.
CREATE TABLE topic_clusters (
  chatbot_id uuid NOT NULL REFERENCES topic_models ON DELETE CASCADE,
  id uuid NOT NULL,
  label text NOT NULL,
  keywords text[] NOT NULL,
  configured boolean NOT NULL,
  merged_into uuid,
  embedding_sum bytea NOT NULL,
  size integer NOT NULL,
  terms jsonb NOT NULL,
  labelled_at_size integer NOT NULL,
  seq bigint NOT NULL,
  PRIMARY KEY (chatbot_id, id)
);

-- End users' messages no topic has taken yet, waiting to form new ones (at most 1,000 per chatbot).
-- Derived from message content: erasure and chatbot deletion remove them.
CREATE TABLE topic_pool (
  chatbot_id uuid NOT NULL REFERENCES topic_models ON DELETE CASCADE,
  conversation_id uuid NOT NULL,
  message_id text NOT NULL,
  embedding bytea NOT NULL,
  terms text[] NOT NULL,
  attached_to text NOT NULL,
  seq bigint NOT NULL,
  PRIMARY KEY (chatbot_id, conversation_id, message_id)
);
CREATE INDEX topic_pool_conversation ON topic_pool (conversation_id);

-- Each result's topic labels at the time (topics holds their ids), for the conversation's summary event.
ALTER TABLE analysis_results ADD COLUMN topic_labels text[] NOT NULL DEFAULT '{}';
UPDATE analysis_results SET topic_labels = topics;

-- The read side. Topics by id: their current label and keywords, and the topic a merged one counts in
-- (canonical_id: itself unless merged). Results name topics by id ("other" for the long tail; the lexical
-- and LLM analyzers' key phrases are their own ids and have no row here).
CREATE TABLE rm_topics (
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  id text NOT NULL,
  label text NOT NULL,
  keywords text[] NOT NULL,
  configured boolean NOT NULL,
  canonical_id text NOT NULL,
  discovered_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (chatbot_id, id)
);
CREATE INDEX rm_topics_canonical ON rm_topics (chatbot_id, canonical_id);
SELECT cas_protect_read_model('public.rm_topics'::regclass);

-- Figures describe the end user by default: the rollups' sentiment columns now count end-user messages
-- only, and the assistant's sentiment has columns of its own. Topics come from end-user messages only,
-- with their sentiment.
ALTER TABLE rm_conversations
  ADD COLUMN assistant_sentiment_score double precision,
  ADD COLUMN assistant_sentiment_label text;

ALTER TABLE rm_hourly_stats
  ADD COLUMN assistant_sentiment_sum numeric NOT NULL DEFAULT 0,
  ADD COLUMN assistant_sentiment_count integer NOT NULL DEFAULT 0,
  ADD COLUMN assistant_positive integer NOT NULL DEFAULT 0,
  ADD COLUMN assistant_neutral integer NOT NULL DEFAULT 0,
  ADD COLUMN assistant_negative integer NOT NULL DEFAULT 0;
ALTER TABLE rm_org_hourly_stats
  ADD COLUMN assistant_sentiment_sum numeric NOT NULL DEFAULT 0,
  ADD COLUMN assistant_sentiment_count integer NOT NULL DEFAULT 0,
  ADD COLUMN assistant_positive integer NOT NULL DEFAULT 0,
  ADD COLUMN assistant_neutral integer NOT NULL DEFAULT 0,
  ADD COLUMN assistant_negative integer NOT NULL DEFAULT 0;
-- A topic's messages are analyzed end-user messages: the sum of their scores gives its mean sentiment.
ALTER TABLE rm_hourly_topics ADD COLUMN sentiment_sum numeric NOT NULL DEFAULT 0;
ALTER TABLE rm_daily_topics ADD COLUMN sentiment_sum numeric NOT NULL DEFAULT 0;

-- Existing rollups recounted from the messages' latest results, as the projector now counts them.
UPDATE rm_hourly_stats s SET
  sentiment_sum = coalesce(n.user_sum, 0), sentiment_count = coalesce(n.user_count, 0),
  positive = coalesce(n.user_positive, 0), neutral = coalesce(n.user_neutral, 0),
  negative = coalesce(n.user_negative, 0),
  assistant_sentiment_sum = coalesce(n.assistant_sum, 0), assistant_sentiment_count = coalesce(n.assistant_count, 0),
  assistant_positive = coalesce(n.assistant_positive, 0), assistant_neutral = coalesce(n.assistant_neutral, 0),
  assistant_negative = coalesce(n.assistant_negative, 0)
  FROM rm_hourly_stats s0
  LEFT JOIN (
    SELECT chatbot_id, date_trunc('hour', sent_at, 'UTC') AS hour,
           sum(sentiment_score::numeric) FILTER (WHERE role = 'user') AS user_sum,
           count(*) FILTER (WHERE role = 'user') AS user_count,
           count(*) FILTER (WHERE role = 'user' AND sentiment_label = 'positive') AS user_positive,
           count(*) FILTER (WHERE role = 'user' AND sentiment_label = 'neutral') AS user_neutral,
           count(*) FILTER (WHERE role = 'user' AND sentiment_label = 'negative') AS user_negative,
           sum(sentiment_score::numeric) FILTER (WHERE role = 'assistant') AS assistant_sum,
           count(*) FILTER (WHERE role = 'assistant') AS assistant_count,
           count(*) FILTER (WHERE role = 'assistant' AND sentiment_label = 'positive') AS assistant_positive,
           count(*) FILTER (WHERE role = 'assistant' AND sentiment_label = 'neutral') AS assistant_neutral,
           count(*) FILTER (WHERE role = 'assistant' AND sentiment_label = 'negative') AS assistant_negative
      FROM rm_messages
     WHERE sent_at IS NOT NULL AND sentiment_label IS NOT NULL
     GROUP BY 1, 2) n ON (n.chatbot_id, n.hour) = (s0.chatbot_id, s0.hour)
 WHERE (s.chatbot_id, s.hour) = (s0.chatbot_id, s0.hour);

UPDATE rm_org_hourly_stats o SET
  sentiment_sum = n.sentiment_sum, sentiment_count = n.sentiment_count, positive = n.positive,
  neutral = n.neutral, negative = n.negative, assistant_sentiment_sum = n.assistant_sentiment_sum,
  assistant_sentiment_count = n.assistant_sentiment_count, assistant_positive = n.assistant_positive,
  assistant_neutral = n.assistant_neutral, assistant_negative = n.assistant_negative
  FROM (SELECT org_id, hour, sum(sentiment_sum) AS sentiment_sum, sum(sentiment_count) AS sentiment_count,
               sum(positive) AS positive, sum(neutral) AS neutral, sum(negative) AS negative,
               sum(assistant_sentiment_sum) AS assistant_sentiment_sum,
               sum(assistant_sentiment_count) AS assistant_sentiment_count,
               sum(assistant_positive) AS assistant_positive, sum(assistant_neutral) AS assistant_neutral,
               sum(assistant_negative) AS assistant_negative
          FROM rm_hourly_stats GROUP BY 1, 2) n
 WHERE (o.org_id, o.hour) = (n.org_id, n.hour);

DELETE FROM rm_hourly_topics;
INSERT INTO rm_hourly_topics (org_id, chatbot_id, hour, topic, messages, sentiment_sum)
SELECT org_id, chatbot_id, date_trunc('hour', sent_at, 'UTC'), topic, count(*), sum(sentiment_score::numeric)
  FROM rm_messages, unnest(topics) AS topic
 WHERE role = 'user' AND sent_at IS NOT NULL AND sentiment_label IS NOT NULL
 GROUP BY 1, 2, 3, 4;
DELETE FROM rm_daily_topics;
INSERT INTO rm_daily_topics (org_id, chatbot_id, day, topic, messages, sentiment_sum)
SELECT org_id, chatbot_id, date_trunc('day', hour, 'UTC'), topic, sum(messages), sum(sentiment_sum)
  FROM rm_hourly_topics GROUP BY 1, 2, 3, 4;

-- Down Migration
ALTER TABLE rm_daily_topics DROP COLUMN sentiment_sum;
ALTER TABLE rm_hourly_topics DROP COLUMN sentiment_sum;
ALTER TABLE rm_org_hourly_stats DROP COLUMN assistant_negative, DROP COLUMN assistant_neutral,
  DROP COLUMN assistant_positive, DROP COLUMN assistant_sentiment_count, DROP COLUMN assistant_sentiment_sum;
ALTER TABLE rm_hourly_stats DROP COLUMN assistant_negative, DROP COLUMN assistant_neutral,
  DROP COLUMN assistant_positive, DROP COLUMN assistant_sentiment_count, DROP COLUMN assistant_sentiment_sum;
ALTER TABLE rm_conversations DROP COLUMN assistant_sentiment_label, DROP COLUMN assistant_sentiment_score;
DROP TABLE rm_topics;
ALTER TABLE analysis_results DROP COLUMN topic_labels;
DROP TABLE topic_pool, topic_clusters, topic_models;
