-- Up Migration

-- The capture write model. The conversation registry gives each (chatbot, caller's conversationId) a
-- stable internal id and holds the metadata as now stored, to tell whether a capture changed it.
CREATE TABLE capture_conversations (
  id uuid PRIMARY KEY,
  chatbot_id uuid NOT NULL REFERENCES chatbots (id) ON DELETE CASCADE,
  org_id uuid NOT NULL,
  external_id text NOT NULL,
  end_user jsonb NOT NULL DEFAULT '{}',
  end_user_organization jsonb NOT NULL DEFAULT '{}',
  session jsonb NOT NULL DEFAULT '{}',
  custom jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  UNIQUE (chatbot_id, external_id)
);

-- The message-id ledger: a message id is stored once per conversation. Concurrent captures of the same
-- message meet on this primary key, so exactly one of them counts it.
CREATE TABLE capture_message_ids (
  conversation_id uuid NOT NULL REFERENCES capture_conversations (id) ON DELETE CASCADE,
  message_id text NOT NULL,
  PRIMARY KEY (conversation_id, message_id)
);

-- Down Migration
DROP TABLE capture_message_ids;
DROP TABLE capture_conversations;
