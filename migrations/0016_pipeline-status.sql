-- Up Migration

-- How current the read models and the analysis are (issue 18): the dashboard says it, and /readyz and the
-- metrics say the same for operators. See libs/eventlog/src/progress.ts and pipeline-status.ts.

-- The commit time (occurredAt) of the last event a group applied from each partition, recorded with the
-- checkpoint. In Kafka mode the oldest event a group has not applied yet was committed after it.
ALTER TABLE consumer_checkpoints ADD COLUMN last_occurred_at timestamptz;

-- Since when each queued analysis has been owed: its capture's time (the event's occurredAt), or the time a
-- re-analysis was asked for. The oldest waiting job tells how far behind analysis is. Jobs already done keep
-- NULL; the waiting ones start from when they were queued.
ALTER TABLE analysis_jobs ADD COLUMN requested_at timestamptz;
UPDATE analysis_jobs SET requested_at = created_at WHERE status IN ('pending', 'running');
CREATE INDEX analysis_jobs_waiting_since ON analysis_jobs (requested_at) WHERE status IN ('pending', 'running');

-- A status read model, one row per stage of the pipeline, kept by the stage's own processes (the projector,
-- the analysis service), one of them at a time, every few seconds. It is about the whole service, not about
-- an organization: one shared pipeline applies every organization's events in commit order, so how far it
-- is behind bounds how current anyone's figures are. The query service reads it as is (no row-level
-- security: it holds no organization's data).
CREATE TABLE pipeline_status (
  stage text PRIMARY KEY CHECK (stage IN ('projection', 'analysis')),
  -- The process keeping the row; another takes over when its reports stop.
  reporter text NOT NULL,
  -- Events committed that the stage has not applied yet (in Kafka mode including those not yet relayed).
  events bigint NOT NULL,
  -- Analysis only: jobs waiting (queued, running, or waiting for a retry).
  jobs integer,
  -- When the oldest of that work was committed (or asked for); NULL when there is none.
  oldest_pending_at timestamptz,
  checked_at timestamptz NOT NULL
);
GRANT SELECT ON pipeline_status TO cas_reader;

-- Down Migration
REVOKE SELECT ON pipeline_status FROM cas_reader;
DROP TABLE pipeline_status;
DROP INDEX analysis_jobs_waiting_since;
ALTER TABLE analysis_jobs DROP COLUMN requested_at;
ALTER TABLE consumer_checkpoints DROP COLUMN last_occurred_at;
