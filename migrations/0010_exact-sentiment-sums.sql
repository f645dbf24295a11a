-- Up Migration

-- Sentiment sums in the hourly rollups become exact decimals. As double precision, the sum depended on
-- the order the projector happened to add scores in (batching, partitions), so a rebuild from the log
-- could differ from the live rollup in the last bits. Scores have at most a few decimals; numeric adds
-- them exactly, in any order, and erasure subtracts them back exactly.
ALTER TABLE rm_hourly_stats ALTER COLUMN sentiment_sum TYPE numeric;

-- Down Migration
ALTER TABLE rm_hourly_stats ALTER COLUMN sentiment_sum TYPE double precision;
