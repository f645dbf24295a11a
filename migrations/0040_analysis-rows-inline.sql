-- Up Migration

-- An analysed message's row (its float32 embedding, 1,536 bytes, with its cues) and a topic's (its
-- embedding sum) went past the default TOAST threshold (about 2 KB): Postgres first tried to compress the
-- embedding, which fails on float bytes, then wrote it out of line, a second heap row and index entry in
-- the TOAST table, and read it back from there (DSTC11's analysis: 3.8 MB of analysis_results' TOAST).
-- Rows now stay inline up to a page, and a row still larger has its embedding moved out of line without a
-- compression attempt, as the journal's payload (0021; bench/FINDINGS.md, "Postgres per message").
ALTER TABLE analysis_results SET (toast_tuple_target = 8160);
ALTER TABLE analysis_results ALTER COLUMN embedding SET STORAGE EXTERNAL;
ALTER TABLE topic_clusters SET (toast_tuple_target = 8160);
ALTER TABLE topic_clusters ALTER COLUMN embedding_sum SET STORAGE EXTERNAL;

-- Down Migration
ALTER TABLE topic_clusters ALTER COLUMN embedding_sum SET STORAGE EXTENDED;
ALTER TABLE topic_clusters RESET (toast_tuple_target);
ALTER TABLE analysis_results ALTER COLUMN embedding SET STORAGE EXTENDED;
ALTER TABLE analysis_results RESET (toast_tuple_target);
