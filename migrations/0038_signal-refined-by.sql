-- Up Migration

-- Which LLM confirmed a conversation signal (SIGNALS_LLM_REFINE=borderline, migration 0035): the
-- `refinedBy` ("llm:<model>") of the signal in its conversation's last analysis.signals-detected, null
-- when the local model alone decided it. The conversation API and the dashboard show it with the
-- signal's evidence. Rows projected before this have it null until the next analysis.signals-detected
-- of their conversation, or a replay (npm run replay), which rebuilds it from the events.
ALTER TABLE rm_conversation_signals ADD COLUMN refined_by text;

-- Down Migration
ALTER TABLE rm_conversation_signals DROP COLUMN refined_by;
