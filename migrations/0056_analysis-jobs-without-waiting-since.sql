-- Up Migration

-- One index fewer for every claim to write (services/analysis/src/jobs.ts; bench/FINDINGS.md "perf10").
-- A claim's update (pending → running) changes `status`, which three partial indexes name in their
-- predicates, so it is never a HOT update: each claimed job writes a new entry in every index whose
-- predicate its new version meets (the primary key, source_event_id, chatbot_id, conversation_open, leased
-- and this one). analysis_jobs_waiting_since held the same rows as analysis_jobs_conversation_open
-- (`status IN ('pending', 'running')` and `status NOT IN ('done', 'dead')`: status is one of the four) and
-- served one read, the oldest waiting job's requested_at for the pipeline status and the metrics, which
-- already counted those jobs in the same scan. jobCounts and hasPendingJobs now read the open jobs on
-- analysis_jobs_conversation_open, by its own predicate.
DROP INDEX analysis_jobs_waiting_since;

-- Down Migration
CREATE INDEX analysis_jobs_waiting_since ON analysis_jobs (requested_at) WHERE status IN ('pending', 'running');
