-- Up Migration

-- A failing re-clustering run, from analysis.topics-recluster-failed (issue 31): how many attempts in a
-- row failed and when the next is due, reset by analysis.topics-reclustered. The query service reports
-- it with the settling status (GET /api/v1/analytics/topics), so the dashboard and a replay agree.
ALTER TABLE rm_topic_reclustering
  ADD COLUMN failed_attempts integer NOT NULL DEFAULT 0,
  ADD COLUMN next_attempt_at timestamptz;

-- Down Migration
ALTER TABLE rm_topic_reclustering DROP COLUMN next_attempt_at, DROP COLUMN failed_attempts;
