-- Up Migration

-- The event journal: every event the write side commits, appended inside the same transaction as the
-- command-side state it belongs to (transactional outbox). Read in `position` order by the relay and by
-- the journal-backed consumers.
--
-- position = (xid8 of the appending transaction << 16) | index of the event within that transaction.
-- A reader only reads positions below (pg_snapshot_xmin(pg_current_snapshot()) << 16): every transaction
-- with a smaller id has finished, so no event can ever appear behind a position a reader has passed, even
-- though transactions commit in a different order than they started. See libs/eventlog/src/journal.ts.
CREATE TABLE event_journal (
  position bigint PRIMARY KEY,
  event_id uuid NOT NULL UNIQUE,
  stream_type text NOT NULL,
  stream_id uuid NOT NULL,
  stream_version integer NOT NULL CHECK (stream_version >= 1),
  type text NOT NULL,
  version integer NOT NULL CHECK (version >= 1),
  occurred_at timestamptz NOT NULL,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  payload jsonb NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  UNIQUE (stream_type, stream_id, stream_version)
);

-- One row per stream: its current version (optimistic concurrency) and the id of the last transaction
-- that appended to it. An appender holds this row's lock while it appends and refuses to append when
-- the stream's last transaction id is above its own: otherwise its events would sort before events of
-- the same stream that it has already seen, and per-stream order would break.
CREATE TABLE event_streams (
  stream_type text NOT NULL,
  stream_id uuid NOT NULL,
  version integer NOT NULL,
  last_tx xid8 NOT NULL,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  PRIMARY KEY (stream_type, stream_id)
);

-- Consumer checkpoints, written in the same transaction as the effects of the batch they cover.
-- Kafka backend: (topic, partition) → last applied offset. Journal backend: ('$journal', virtual
-- partition) → last applied journal position.
CREATE TABLE consumer_checkpoints (
  group_id text NOT NULL,
  topic text NOT NULL,
  partition integer NOT NULL,
  last_offset bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, topic, partition)
);

-- The last stream version each consumer group applied, per stream: the relay may publish an event twice
-- (never skip one), so consumers drop any event whose version is not above this.
CREATE TABLE consumer_stream_versions (
  group_id text NOT NULL,
  stream_type text NOT NULL,
  stream_id uuid NOT NULL,
  version integer NOT NULL,
  PRIMARY KEY (group_id, stream_type, stream_id)
);

-- Down Migration
DROP TABLE consumer_stream_versions;
DROP TABLE consumer_checkpoints;
DROP TABLE event_streams;
DROP TABLE event_journal;
