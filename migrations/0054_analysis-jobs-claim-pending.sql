-- Up Migration

-- The claim's queue read in order whatever the statistics, without the jobs in flight
-- (services/analysis/src/jobs.ts, CLAIM_JOBS; bench/FINDINGS.md "perf9").
--
-- The due jobs: pending by (next_attempt_at, id), on a predicate, `(status = 'pending') IS TRUE` (the same
-- rows: status is NOT NULL), that implies no other index's. With `status IN ('pending', 'running')`, shared
-- with analysis_jobs_waiting_since, statistics taken while no job waited (autovacuum between two
-- re-analyses) let the planner read every waiting job on that index, probe each for an earlier open job of
-- its conversation, and sort them all for the first few: ~1,190 shared blocks a claim in DSTC11's window.
--
-- The lapsed leases: by lease_until, of the jobs holding one. A running job keeps the next_attempt_at it
-- was claimed at, so in the old index every job in flight sat ahead of every due one. Only a running job
-- holds a lease (every other status is written with lease_until NULL): a constraint says so, and the claim
-- finds the lapsed ones by lease_until alone. A claimed job's version goes into this index instead of the
-- queue's: a claim writes as many index entries as before.
UPDATE analysis_jobs SET lease_until = NULL WHERE status <> 'running' AND lease_until IS NOT NULL;
ALTER TABLE analysis_jobs ADD CONSTRAINT analysis_jobs_lease_running CHECK (lease_until IS NULL OR status = 'running');
DROP INDEX analysis_jobs_ready;
CREATE INDEX analysis_jobs_ready ON analysis_jobs (next_attempt_at, id) WHERE (status = 'pending') IS TRUE;
CREATE INDEX analysis_jobs_leased ON analysis_jobs (lease_until) WHERE lease_until IS NOT NULL;

-- Down Migration
DROP INDEX analysis_jobs_leased;
DROP INDEX analysis_jobs_ready;
CREATE INDEX analysis_jobs_ready ON analysis_jobs (next_attempt_at, id) WHERE status IN ('pending', 'running');
ALTER TABLE analysis_jobs DROP CONSTRAINT analysis_jobs_lease_running;
