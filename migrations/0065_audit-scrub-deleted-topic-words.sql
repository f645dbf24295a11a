-- Up Migration

-- Deleting a chatbot now scrubs from the audit log the topic labels and example requests its topic
-- commands named (services/gateway/src/audit/record.ts scrubDeletedChatbot), as it did its settings
-- patches: they are its end users' words, often, and go with the rest of its data. Chatbots deleted before
-- it still had them in their entries; this scrubs those. A topic command's entry keeps its topic ids.
UPDATE audit_log a
   SET details = details - 'label' - 'previousLabel' - 'examples'
  FROM chatbot_data_keys k
 WHERE k.wrapped_key IS NULL AND a.target_type = 'chatbot' AND a.target_id = k.chatbot_id::text
   AND a.action IN ('chatbot.topic-rename-requested', 'chatbot.topic-creation-requested');

-- Down Migration
-- Nothing to undo: the scrubbed words are gone for good, as they are once a chatbot is deleted.
SELECT 1;
