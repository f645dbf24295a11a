-- Up Migration

-- End users erased from a chatbot's topic window since its last re-clustering. A topic's keywords and
-- label are made from its members' words, so an erased end user's words (a name, say) stayed in them
-- until a re-clustering, which only the chatbot's new requests brought on (bench/FINDINGS.md, trial9).
-- An erasure now makes the chatbot due for one (services/analysis/src/topics/reclusterer.ts), which
-- remakes its topics' keywords and labels from the members left.
ALTER TABLE topic_reclustering ADD COLUMN erasures_since_run integer NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE topic_reclustering DROP COLUMN erasures_since_run;
