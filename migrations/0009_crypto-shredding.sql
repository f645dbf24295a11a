-- Up Migration

-- Per-chatbot data keys for the personal fields of events (crypto-shredding). A key is stored only
-- wrapped by the master key, which lives in configuration, not in the database. Deleting a chatbot
-- destroys its key (wrapped_key NULL) and keeps the row as a tombstone: readers then skip every event of
-- that chatbot, sealed or from before encryption. Not readable by the query role.
CREATE TABLE chatbot_data_keys (
  chatbot_id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  wrapped_key bytea,
  master_key_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  destroyed_at timestamptz,
  CHECK ((wrapped_key IS NULL) = (destroyed_at IS NOT NULL)),
  CHECK ((wrapped_key IS NULL) = (master_key_id IS NULL))
);

-- Deleting a chatbot purges its journal rows stream by stream.
CREATE INDEX event_streams_chatbot ON event_streams (chatbot_id);

-- Down Migration
DROP INDEX event_streams_chatbot;
DROP TABLE chatbot_data_keys;
