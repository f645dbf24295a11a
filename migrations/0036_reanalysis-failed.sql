-- Up Migration

-- A re-analysis whose command failed for good (analysis.reanalysis-failed, issue 31): rm_reanalysis holds
-- it as failed, with a reason a lead may read, so that another may be asked for.
ALTER TABLE rm_reanalysis DROP CONSTRAINT rm_reanalysis_status_check;
ALTER TABLE rm_reanalysis ADD CONSTRAINT rm_reanalysis_status_check
  CHECK (status IN ('running', 'finished', 'failed'));
ALTER TABLE rm_reanalysis ADD COLUMN reason text;

-- Down Migration
DELETE FROM rm_reanalysis WHERE status = 'failed';
ALTER TABLE rm_reanalysis DROP COLUMN reason;
ALTER TABLE rm_reanalysis DROP CONSTRAINT rm_reanalysis_status_check;
ALTER TABLE rm_reanalysis ADD CONSTRAINT rm_reanalysis_status_check CHECK (status IN ('running', 'finished'));
