-- Up Migration

-- The claim's probe for an earlier open job of the same conversation (services/analysis/src/jobs.ts,
-- CLAIM_JOBS) on an index whose predicate only that probe implies. With the predicate `status IN
-- ('pending', 'running')`, shared with analysis_jobs_ready and analysis_jobs_waiting_since, statistics
-- taken while no job waited (an idle service; every job 'done') let the planner read all the waiting jobs
-- for every waiting job: 20 million rows and 9 s for one claim of a 4,500-job re-analysis
-- (bench/FINDINGS.md "The claim order's quadratic plan").
DROP INDEX analysis_jobs_conversation_waiting;
CREATE INDEX analysis_jobs_conversation_open ON analysis_jobs (conversation_id, id)
  WHERE status NOT IN ('done', 'dead');

-- Down Migration
DROP INDEX analysis_jobs_conversation_open;
CREATE INDEX analysis_jobs_conversation_waiting ON analysis_jobs (conversation_id, id)
  WHERE status IN ('pending', 'running');
