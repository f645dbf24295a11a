-- Up Migration

-- Topic commands reach the analysis service as events (issue 31, item 6): owners and admins ask the
-- gateway, which commits a chatbot.topic-*-requested event; the analysis consumer queues it here in the
-- transaction that records its checkpoint, and the topic command runner applies it to the chatbot's
-- topic state in a transaction of its own, appending the analysis events (services/analysis/src/topics/
-- topic-commands.ts). A chatbot's commands are applied one at a time, in the order they were committed.
CREATE TABLE analysis_commands (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source_event_id uuid NOT NULL UNIQUE,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  type text NOT NULL,
  payload jsonb NOT NULL,
  metadata jsonb NOT NULL,
  requested_at timestamptz NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'dead')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_error text
);
CREATE INDEX analysis_commands_by_chatbot ON analysis_commands (chatbot_id, id);

-- Whether each chatbot's topics are settling (requests placed since the last re-clustering) and when
-- they were last re-clustered, from analysis.topics-settling and analysis.topics-reclustered: the query
-- service reads it for GET /api/v1/analytics/topics (it read the analysis service's topic_reclustering).
CREATE TABLE rm_topic_reclustering (
  org_id uuid NOT NULL,
  chatbot_id uuid PRIMARY KEY,
  settling boolean NOT NULL,
  settling_since timestamptz,
  last_reclustered_at timestamptz,
  updated_at timestamptz NOT NULL
);
SELECT cas_protect_read_model('public.rm_topic_reclustering'::regclass);
-- What topic_reclustering says now, for chatbots whose events came before these two existed (a rebuild
-- from the log knows them from their next placement or re-clustering).
INSERT INTO rm_topic_reclustering (org_id, chatbot_id, settling, settling_since, last_reclustered_at, updated_at)
SELECT org_id, chatbot_id, requests_since_run > 0, pending_since, last_run_at, now() FROM topic_reclustering;

-- Down Migration
DROP TABLE rm_topic_reclustering;
DROP TABLE analysis_commands;
