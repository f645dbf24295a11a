-- Up Migration

-- The analyzer the analysis service runs now (name@version; NULL while its model loads), kept in the analysis
-- stage's status row by the process that reports it (libs/eventlog/src/pipeline-status.ts). GET /api/v1/status
-- says it, and a chatbot's messages read by another analyzer are counted against it
-- (GET /api/v1/chatbots/{id}/analyzers): past conversations keep the results of the analyzer that read them
-- until they are re-analysed, and nothing said so (bench/FINDINGS.md, trial8).
ALTER TABLE pipeline_status ADD COLUMN analyzer text;

-- Down Migration
ALTER TABLE pipeline_status DROP COLUMN analyzer;
