-- Up Migration

-- The correlation id of the capture an analysis job came from, carried into the analysis events it
-- produces (their metadata), so that one capture can be followed through every service.
ALTER TABLE analysis_jobs ADD COLUMN correlation_id text;

-- Down Migration
ALTER TABLE analysis_jobs DROP COLUMN correlation_id;
