-- Up Migration

-- The analysis service's work queue. Its consumer turns each conversation.messages-captured event that
-- asked for analysis into a job, in the transaction that records its checkpoint (so an event is queued
-- exactly once); workers claim jobs with a lease and call the analyzer outside any transaction, so a slow
-- provider never holds a transaction open. A worker that dies leaves its lease to expire, and the job is
-- claimed again: a message is never lost to analysis.
CREATE TABLE analysis_jobs (
  id bigserial PRIMARY KEY,
  source_event_id uuid NOT NULL UNIQUE,
  conversation_id uuid NOT NULL,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  messages jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'dead')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  lease_until timestamptz,
  last_error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX analysis_jobs_ready ON analysis_jobs (next_attempt_at) WHERE status IN ('pending', 'running');
CREATE INDEX analysis_jobs_chatbot ON analysis_jobs (chatbot_id);

-- The latest result per message, for the per-conversation summary (sentiment and topics over all of it).
CREATE TABLE analysis_results (
  conversation_id uuid NOT NULL,
  message_id text NOT NULL,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  role text NOT NULL,
  score double precision NOT NULL,
  label text NOT NULL,
  topics text[] NOT NULL,
  analyzer text NOT NULL,
  analyzed_at timestamptz NOT NULL,
  PRIMARY KEY (conversation_id, message_id)
);
CREATE INDEX analysis_results_chatbot ON analysis_results (chatbot_id);

-- Jobs that failed for good: the input, why, and after how many attempts; kept for inspection and replay.
CREATE TABLE analysis_dead_letters (
  job_id bigint PRIMARY KEY REFERENCES analysis_jobs (id) ON DELETE CASCADE,
  conversation_id uuid NOT NULL,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  reason text NOT NULL,
  attempts integer NOT NULL,
  failed_at timestamptz NOT NULL
);

-- Down Migration
DROP TABLE analysis_dead_letters;
DROP TABLE analysis_results;
DROP TABLE analysis_jobs;
