-- Up Migration

-- The capture event a re-analysis job analyses again (trial2). A job's source_event_id is its key: the
-- capture event for the live job, but a key derived from (capture, analyzer version, run) for a
-- re-analysis' (services/analysis/src/reanalyze.ts), so that a version or a run re-analyses once. The
-- analysis events name their cause by id (`causationId`, libs/events/README.md), and a re-analysis' named
-- that key, an id no event has. NULL for a live job: its key is its cause.
ALTER TABLE analysis_jobs ADD COLUMN cause_event_id uuid;

-- Down Migration
ALTER TABLE analysis_jobs DROP COLUMN cause_event_id;
