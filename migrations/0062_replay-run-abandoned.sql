-- Up Migration

-- A rebuild left running by an older version whose shadow tables no longer match the read models (a migration
-- since added a table or changed one's columns) is not resumed but abandoned: its schema and its consumer
-- group's rows are dropped and a new run starts from the beginning of the log (services/projector/src/rebuild.ts).
ALTER TABLE replay_runs DROP CONSTRAINT replay_runs_status_check;
ALTER TABLE replay_runs ADD CONSTRAINT replay_runs_status_check CHECK (status IN ('running', 'done', 'abandoned'));

-- Down Migration
DELETE FROM replay_runs WHERE status = 'abandoned';
ALTER TABLE replay_runs DROP CONSTRAINT replay_runs_status_check;
ALTER TABLE replay_runs ADD CONSTRAINT replay_runs_status_check CHECK (status IN ('running', 'done'));
