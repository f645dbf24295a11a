-- Up Migration

-- The message-id ledger, one row per capture instead of one per message (issue 18). A capture that stores
-- messages adds one batch: the conversation, the first of its new ids (a message id is stored once per
-- conversation, so no two batches share it) and all of them. A capture reads the batches of its
-- conversation, under the lock of the conversation's registry row, to tell which incoming ids are new;
-- the row's `message_batches` counts the batches written, so that a capture whose snapshot predates a
-- concurrent capture of the same conversation (it waited for the lock) sees that it missed one and runs
-- again. Per message this writes about a tenth of what a row and an index entry per id did.
CREATE TABLE capture_message_batches (
  conversation_id uuid NOT NULL REFERENCES capture_conversations (id) ON DELETE CASCADE,
  first_message_id text NOT NULL,
  message_ids text[] NOT NULL CHECK (cardinality(message_ids) >= 1 AND message_ids[1] = first_message_id),
  PRIMARY KEY (conversation_id, first_message_id)
);

ALTER TABLE capture_conversations ADD COLUMN message_batches integer NOT NULL DEFAULT 0;

INSERT INTO capture_message_batches (conversation_id, first_message_id, message_ids)
SELECT conversation_id, (array_agg(message_id ORDER BY message_id))[1], array_agg(message_id ORDER BY message_id)
  FROM capture_message_ids GROUP BY conversation_id;
UPDATE capture_conversations c SET message_batches = 1
 WHERE EXISTS (SELECT 1 FROM capture_message_batches b WHERE b.conversation_id = c.id);

DROP TABLE capture_message_ids;

-- The ledger one message id a row, as before: for operators and tests that ask which ids a conversation has.
CREATE VIEW capture_message_ids AS
  SELECT b.conversation_id, m.message_id FROM capture_message_batches b, unnest(b.message_ids) AS m(message_id);

-- Down Migration
DROP VIEW capture_message_ids;
CREATE TABLE capture_message_ids (
  conversation_id uuid NOT NULL REFERENCES capture_conversations (id) ON DELETE CASCADE,
  message_id text NOT NULL,
  PRIMARY KEY (conversation_id, message_id)
);
INSERT INTO capture_message_ids (conversation_id, message_id)
SELECT b.conversation_id, m FROM capture_message_batches b, unnest(b.message_ids) m;
DROP TABLE capture_message_batches;
ALTER TABLE capture_conversations DROP COLUMN message_batches;
