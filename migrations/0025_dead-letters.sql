-- Up Migration

-- One bad event never stops the pipeline (DESIGN.md guarantee 9, issue 30). An event a consumer group
-- cannot apply, after a bounded number of attempts and on its own, is set aside here, in the same
-- transaction that moves the group's checkpoint and stream version past it; every other event flows on.
-- An operator lists, inspects, re-drives (after a fix) or discards them (`npm run dead-letters`); a
-- re-drive is asked for here (`redrive_requested_at`) and done by a running member of the group, with the
-- group's own handler (libs/eventlog/src/dead-letters.ts).
--
-- `record` is the event as the consumer received it, as JSON text (`text`, not `jsonb`: what could not be
-- applied may be exactly what jsonb refuses, such as an escaped lone surrogate). Its payload is as sealed
-- as in the journal; deleting the chatbot deletes its dead letters too (and destroys the key that opens
-- them). `message` keeps the raw bytes of a Kafka message that could not even be read as an event.
CREATE TABLE dead_letters (
  id bigserial PRIMARY KEY,
  group_id text NOT NULL,
  topic text NOT NULL,
  partition int NOT NULL,
  "offset" bigint NOT NULL,
  event_id uuid,
  event_type text,
  stream_type text,
  stream_id uuid,
  stream_version int,
  org_id uuid,
  chatbot_id uuid,
  record text,
  error text NOT NULL,
  attempts int NOT NULL,
  dead_lettered_at timestamptz NOT NULL DEFAULT now(),
  redrive_requested_at timestamptz,
  UNIQUE (group_id, event_id)
);
CREATE INDEX dead_letters_redrive ON dead_letters (group_id) WHERE redrive_requested_at IS NOT NULL;
CREATE INDEX dead_letters_chatbot ON dead_letters (chatbot_id);

-- Down Migration
DROP TABLE dead_letters;
