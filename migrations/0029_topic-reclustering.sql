-- Up Migration

-- Re-clustering in the background with stable identities (issue 31, services/analysis/src/topics/
-- recluster.ts and reclusterer.ts). Each chatbot's most recent end-user requests (its window) are
-- re-clustered now and then, and the new clusters matched to the existing topics by shared members.

-- A topic re-clustering found no cluster for takes no message again (analysis.topic-retired).
ALTER TABLE topic_clusters ADD COLUMN retired boolean NOT NULL DEFAULT false;

-- The requests a chatbot's topics were placed from, newest last: what a re-clustering clusters. Kept to
-- the window's size (TOPIC_RECLUSTER_WINDOW) by each run. Derived from message content: erasure and
-- chatbot deletion remove it, as they do the pool.
CREATE TABLE topic_window (
  chatbot_id uuid NOT NULL REFERENCES topic_models ON DELETE CASCADE,
  conversation_id uuid NOT NULL,
  message_id text NOT NULL,
  embedding bytea NOT NULL,
  terms text[] NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (chatbot_id, conversation_id, message_id)
);
CREATE INDEX topic_window_by_seq ON topic_window (chatbot_id, seq);

-- When each chatbot's topics were last re-clustered and what is due: requests placed since (and since
-- when), the retry state of a failing run, and the lease of the process running it. The dashboard reads
-- it (settling, lastReclusteredAt on GET /api/v1/analytics/topics): readable per organization.
CREATE TABLE topic_reclustering (
  chatbot_id uuid PRIMARY KEY REFERENCES topic_models ON DELETE CASCADE,
  org_id uuid NOT NULL,
  requests_since_run integer NOT NULL DEFAULT 0,
  pending_since timestamptz,
  window_at_run integer NOT NULL DEFAULT 0,
  last_run_at timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  running_until timestamptz,
  last_error text
);
SELECT cas_protect_read_model('public.topic_reclustering'::regclass);

-- The read side's lineage: the topic a split-off topic came from, and when a topic was retired.
ALTER TABLE rm_topics ADD COLUMN split_from text, ADD COLUMN retired_at timestamptz;

-- Down Migration
ALTER TABLE rm_topics DROP COLUMN retired_at, DROP COLUMN split_from;
DROP TABLE topic_reclustering;
DROP TABLE topic_window;
ALTER TABLE topic_clusters DROP COLUMN retired;
