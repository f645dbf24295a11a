-- Up Migration

-- Read models, owned by the projector (services/projector), read by the query service. Every row carries
-- its organization; row-level security below lets the query service's role see only the organization
-- set for its transaction.

CREATE TABLE rm_conversations (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  -- The caller's conversationId. Null only while analysis results have arrived before the conversation
  -- itself (they travel on another topic); such rows are not listed.
  external_id text,
  end_user jsonb NOT NULL DEFAULT '{}',
  end_user_organization jsonb NOT NULL DEFAULT '{}',
  session jsonb NOT NULL DEFAULT '{}',
  custom jsonb NOT NULL DEFAULT '{}',
  end_user_id text GENERATED ALWAYS AS (end_user ->> 'id') STORED,
  message_count integer NOT NULL DEFAULT 0,
  first_message_at timestamptz,
  last_message_at timestamptz,
  created_at timestamptz,
  updated_at timestamptz,
  sentiment_score double precision,
  sentiment_label text,
  topics text[] NOT NULL DEFAULT '{}',
  -- The last conversation-stream version applied: reads wait for the version the write side recorded.
  stream_version integer NOT NULL DEFAULT 0
);
CREATE INDEX rm_conversations_recent ON rm_conversations (org_id, last_message_at DESC, id DESC);
CREATE INDEX rm_conversations_chatbot_recent ON rm_conversations (chatbot_id, last_message_at DESC, id DESC);
CREATE INDEX rm_conversations_end_user ON rm_conversations (org_id, end_user_id);
CREATE INDEX rm_conversations_topics ON rm_conversations USING gin (topics);

CREATE TABLE rm_messages (
  conversation_id uuid NOT NULL,
  message_id text NOT NULL,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  -- Null only while an analysis result has arrived before the message itself.
  role text,
  content text,
  sent_at timestamptz,
  -- Arrival order, for messages with equal sentAt: journal position, then index in the capture.
  arrival numeric,
  sentiment_score double precision,
  sentiment_label text,
  topics text[] NOT NULL DEFAULT '{}',
  analyzer text,
  -- 'simple': no language-specific stemming, since conversations come in every language.
  content_search tsvector GENERATED ALWAYS AS (to_tsvector('simple', coalesce(content, ''))) STORED,
  PRIMARY KEY (conversation_id, message_id)
);
CREATE INDEX rm_messages_order ON rm_messages (conversation_id, sent_at, arrival);
CREATE INDEX rm_messages_search ON rm_messages USING gin (content_search);
CREATE INDEX rm_messages_chatbot ON rm_messages (chatbot_id);

-- Additive per-hour (UTC) rollups for analytics: summing rows never scans messages.
CREATE TABLE rm_hourly_stats (
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  hour timestamptz NOT NULL,
  messages integer NOT NULL DEFAULT 0,
  user_messages integer NOT NULL DEFAULT 0,
  assistant_messages integer NOT NULL DEFAULT 0,
  system_messages integer NOT NULL DEFAULT 0,
  tool_messages integer NOT NULL DEFAULT 0,
  sentiment_sum double precision NOT NULL DEFAULT 0,
  sentiment_count integer NOT NULL DEFAULT 0,
  positive integer NOT NULL DEFAULT 0,
  neutral integer NOT NULL DEFAULT 0,
  negative integer NOT NULL DEFAULT 0,
  PRIMARY KEY (chatbot_id, hour)
);
CREATE INDEX rm_hourly_stats_org ON rm_hourly_stats (org_id, hour);

CREATE TABLE rm_hourly_topics (
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  hour timestamptz NOT NULL,
  topic text NOT NULL,
  messages integer NOT NULL,
  PRIMARY KEY (chatbot_id, hour, topic)
);
CREATE INDEX rm_hourly_topics_org ON rm_hourly_topics (org_id, hour);

-- Which conversations (and end users) were active in which hour: distinct counts are not additive, so
-- "conversations with a message in range" and unique users count distinct rows here.
CREATE TABLE rm_hourly_activity (
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  hour timestamptz NOT NULL,
  conversation_id uuid NOT NULL,
  end_user_id text,
  PRIMARY KEY (chatbot_id, hour, conversation_id)
);
CREATE INDEX rm_hourly_activity_org ON rm_hourly_activity (org_id, hour);

-- Deleted chatbots: events arriving after the deletion (other topics, redelivery) are dropped.
CREATE TABLE rm_deleted_chatbots (
  chatbot_id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  deleted_at timestamptz NOT NULL
);

-- Row-level security for the query service. Its role reads only rows of the organization set for the
-- transaction (set_config('cas.org_id', …, true)); no setting, or a wrong one, sees nothing.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cas_reader') THEN
    CREATE ROLE cas_reader NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
  END IF;
END
$$;
GRANT USAGE ON SCHEMA public TO cas_reader;

CREATE FUNCTION cas_current_org() RETURNS uuid LANGUAGE sql STABLE AS
  $$ SELECT nullif(current_setting('cas.org_id', true), '')::uuid $$;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['rm_conversations', 'rm_messages', 'rm_hourly_stats', 'rm_hourly_topics',
                           'rm_hourly_activity', 'chatbots', 'event_streams']
  LOOP
    EXECUTE format('GRANT SELECT ON %I TO cas_reader', t);
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    -- The owner (the write side, the projector) keeps full access; only cas_reader is confined.
    EXECUTE format('CREATE POLICY owner_all ON %I TO CURRENT_USER USING (true) WITH CHECK (true)', t);
    EXECUTE format('CREATE POLICY org_only ON %I FOR SELECT TO cas_reader USING (org_id = cas_current_org())', t);
  END LOOP;
END
$$;

-- Down Migration
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['chatbots', 'event_streams'] LOOP
    EXECUTE format('DROP POLICY org_only ON %I', t);
    EXECUTE format('DROP POLICY owner_all ON %I', t);
    EXECUTE format('ALTER TABLE %I NO FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I DISABLE ROW LEVEL SECURITY', t);
    EXECUTE format('REVOKE SELECT ON %I FROM cas_reader', t);
  END LOOP;
END
$$;
DROP TABLE rm_deleted_chatbots, rm_hourly_activity, rm_hourly_topics, rm_hourly_stats, rm_messages, rm_conversations;
DROP FUNCTION cas_current_org();
REVOKE USAGE ON SCHEMA public FROM cas_reader;
