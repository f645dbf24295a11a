-- Up Migration

-- An assistant's message that asks the end user for a detail, a choice or a go-ahead: the embedding of its
-- most slot-like sentence (float32 bytes, as `embedding`), decided when it is analysed. An end user's
-- message captured after it is judged against it (an answer makes no topic: services/analysis/src/topics/
-- answers.ts) without the turn being embedded again. Null for every other message.
ALTER TABLE analysis_results ADD COLUMN slot_question bytea;

-- A conversation's jobs are claimed in order, each once the one before it is done (services/analysis/src/jobs.ts
-- claimJobs): the claim looks for an earlier waiting job of the same conversation.
CREATE INDEX analysis_jobs_conversation_waiting ON analysis_jobs (conversation_id, id)
  WHERE status IN ('pending', 'running');

-- Down Migration
DROP INDEX analysis_jobs_conversation_waiting;
ALTER TABLE analysis_results DROP COLUMN slot_question;
