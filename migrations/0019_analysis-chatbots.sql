-- Up Migration

-- What the analysis service knows of each chatbot, learnt from the chatbot events it consumes (issue 19: no
-- service reads another's tables; it read the gateway's `chatbots` before): the settings as of the last
-- chatbot.created or chatbot.settings-changed it applied. chatbot.deleted removes the row. The chatbots
-- created before this migration are copied once from the gateway's table; from then on, events only.
CREATE TABLE analysis_chatbots (
  chatbot_id uuid PRIMARY KEY,
  settings jsonb NOT NULL
);
INSERT INTO analysis_chatbots (chatbot_id, settings) SELECT id, settings FROM chatbots;

-- Down Migration
DROP TABLE analysis_chatbots;
