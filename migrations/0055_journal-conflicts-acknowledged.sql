-- Up Migration

-- The operator's tools for journal_conflicts (npm run journal-conflicts; docs/operations.md, Backups):
-- each row says which event it is (its type, its chatbot) so that the list can be handed on without
-- Kafka, and whether the operator has acknowledged it. /readyz counts only the rows not acknowledged;
-- cas_consumer_dropped_events_total{reason="not_in_journal"} keeps counting (a counter). Rows recorded
-- before this migration have no type or chatbot (null). The list and the acknowledgement look events up
-- by id across groups.
ALTER TABLE journal_conflicts
  ADD COLUMN event_type text,
  ADD COLUMN chatbot_id uuid,
  ADD COLUMN acknowledged_at timestamptz;
CREATE INDEX journal_conflicts_event ON journal_conflicts (event_id);

-- Down Migration
DROP INDEX journal_conflicts_event;
ALTER TABLE journal_conflicts
  DROP COLUMN acknowledged_at,
  DROP COLUMN chatbot_id,
  DROP COLUMN event_type;
