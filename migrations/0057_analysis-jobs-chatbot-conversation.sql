-- Up Migration

-- A conversation's jobs found through an index (services/analysis/src/jobs.ts, forgetConversation;
-- services/analysis/src/signals/llm-refine.ts, transcriptOf; bench/FINDINGS.md "perf11"). Erasing a
-- conversation (an end user's erasure, each conversation a retention sweep erases) and the LLM refinement's
-- transcript read analysis_jobs by conversation_id, which only the open jobs' partial index held: every job
-- ever analysed was read (14,300 pages for 200,000 done jobs, a statement). The index on chatbot_id, which
-- only a chatbot's deletion used, becomes (chatbot_id, conversation_id): both statements name the chatbot,
-- and a deletion reads the same index by its first column. As many entries as before for an enqueue, a
-- claim and a completion to write (neither update is HOT: status is in the partial indexes' predicates);
-- an entry goes to its conversation's leaf instead of the end of its chatbot's.
CREATE INDEX analysis_jobs_chatbot_conversation ON analysis_jobs (chatbot_id, conversation_id);
DROP INDEX analysis_jobs_chatbot;

-- Down Migration
CREATE INDEX analysis_jobs_chatbot ON analysis_jobs (chatbot_id);
DROP INDEX analysis_jobs_chatbot_conversation;
