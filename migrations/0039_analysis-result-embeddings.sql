-- Up Migration

-- Each analysed message's embedding (repetition compares them: services/analysis/src/signals/detect.ts)
-- as float32 bytes (little-endian, as the analysis service holds it) instead of real[]: written as one
-- binary parameter per commit, it costs neither its text form (384 numbers printed by the service and
-- parsed by Postgres: the larger part of the commit's statement time, bench/FINDINGS.md) nor more room.
-- Rows analysed before keep their real[] in `vector` and are read from it; new ones leave it null.
ALTER TABLE analysis_results ADD COLUMN embedding bytea;

-- Down Migration
-- The embeddings written since are lost: those conversations' repetition counts again once re-analysed.
ALTER TABLE analysis_results DROP COLUMN embedding;
