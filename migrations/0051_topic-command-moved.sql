-- Up Migration

-- How many requests an applied topic creation moved into its new topic (analysis.topic-command-handled
-- v2's `moved`; trial2: a creation whose requests all sat in a topic a user had merged into, which is
-- pinned and keeps them, moved none and the dashboard said only "Done"). NULL for other commands, for a
-- creation refused or failed, and for outcomes recorded as v1, which did not say: a rebuild reads those as
-- null too, so no back-fill.
ALTER TABLE rm_topic_command_log ADD COLUMN moved integer CHECK (moved IS NULL OR moved >= 0);

-- Down Migration
ALTER TABLE rm_topic_command_log DROP COLUMN moved;
