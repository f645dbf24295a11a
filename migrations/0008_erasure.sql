-- Up Migration

-- When a conversation last got a message (its latest sentAt), for the retention sweep.
ALTER TABLE capture_conversations ADD COLUMN last_message_at timestamptz;
UPDATE capture_conversations SET last_message_at = created_at;
ALTER TABLE capture_conversations ALTER COLUMN last_message_at SET NOT NULL;
CREATE INDEX capture_conversations_last_message ON capture_conversations (chatbot_id, last_message_at);
CREATE INDEX capture_conversations_end_user ON capture_conversations (chatbot_id, (end_user ->> 'id'));

-- Erased conversations, so that analysis results still in flight never bring their rows back.
CREATE TABLE rm_erased_conversations (
  conversation_id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  erased_at timestamptz NOT NULL
);

-- Erasing a conversation removes its activity rows.
CREATE INDEX rm_hourly_activity_conversation ON rm_hourly_activity (conversation_id);

-- Down Migration
DROP INDEX rm_hourly_activity_conversation;
DROP TABLE rm_erased_conversations;
DROP INDEX capture_conversations_end_user;
DROP INDEX capture_conversations_last_message;
ALTER TABLE capture_conversations DROP COLUMN last_message_at;
