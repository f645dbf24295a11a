-- Up Migration

-- Each analysed end-user message's detected language (analysis.messages-analyzed v4; NULL for other
-- roles, for messages not analysed yet and for results recorded before v4 until a re-analysis or replay).
-- It is in no index, so writing it with the result stays a heap-only update (0022). The analytics
-- response's share of messages not in English reads a range's end-user messages of the selected chatbots
-- through the index below (one entry per end-user message, written at capture; neither column changes
-- when the result arrives).
ALTER TABLE rm_messages ADD COLUMN language text;
CREATE INDEX rm_messages_user_sent ON rm_messages (chatbot_id, sent_at) WHERE role = 'user';

-- Down Migration
DROP INDEX rm_messages_user_sent;
ALTER TABLE rm_messages DROP COLUMN language;
