-- Up Migration

-- Re-analysis from the dashboard (issue 31, item 6): an owner or admin asks the gateway, which commits
-- chatbot.reanalysis-requested; the command runner queues the chatbot's captures for the current
-- analyzer and records the run here, with the keys of its jobs; a background loop counts their open jobs
-- and appends analysis.reanalysis-progressed and -finished (services/analysis/src/reanalysis-runs.ts).
CREATE TABLE analysis_reanalyses (
  reanalysis_id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  job_keys uuid[] NOT NULL,
  done integer NOT NULL DEFAULT 0,
  metadata jsonb NOT NULL,
  started_at timestamptz NOT NULL
);

-- The latest re-analysis of each chatbot, from analysis.reanalysis-*: read by GET and checked by POST
-- /api/v1/chatbots/:id/reanalysis (one runs at a time).
CREATE TABLE rm_reanalysis (
  org_id uuid NOT NULL,
  chatbot_id uuid PRIMARY KEY,
  reanalysis_id uuid NOT NULL,
  status text NOT NULL CHECK (status IN ('running', 'finished')),
  analyzer text NOT NULL,
  done integer NOT NULL,
  failed integer NOT NULL,
  total integer NOT NULL,
  started_at timestamptz NOT NULL,
  finished_at timestamptz
);
SELECT cas_protect_read_model('public.rm_reanalysis'::regclass);

-- Down Migration
DROP TABLE rm_reanalysis;
DROP TABLE analysis_reanalyses;
