-- Up Migration

-- Events a Kafka consumer group left out because the journal does not hold them (helper restore1): Kafka
-- keeps what the relay published, so after an older backup of this database is restored the topics hold
-- events committed after the backup, which the restored journal has lost, and the journal's next events
-- take their stream versions. Applied, the lost events made the group skip the journal's new ones as
-- duplicates; each is left out instead and listed here (ids and where Kafka holds it, no payload), which
-- /readyz reports (docs/operations.md, Backups). A redelivery of the same event adds no row.
CREATE TABLE journal_conflicts (
  group_id text NOT NULL,
  event_id uuid NOT NULL,
  stream_type text NOT NULL,
  stream_id uuid NOT NULL,
  stream_version integer NOT NULL,
  position bigint NOT NULL,
  source_topic text NOT NULL,
  source_partition integer NOT NULL,
  source_offset bigint NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, event_id)
);

-- Down Migration
DROP TABLE journal_conflicts;
