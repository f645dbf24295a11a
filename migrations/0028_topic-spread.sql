-- Up Migration

-- Topics judged by their own spread (issue 31): a message joins a topic only when its similarity to the
-- topic's centroid is within the topic's spread (services/analysis/src/topics/topic-model.ts). Each topic
-- keeps the count, sum and sum of squares of its founding members' similarities to the centroid of the
-- others. Topics found before this have none (count 0): they are judged by the chatbot's other topics'
-- pooled spread until they merge, and until some topic has a spread a message waits in the pool rather
-- than join them. Their pooled messages counted in a nearest topic count in "other" from the next clustering.
ALTER TABLE topic_clusters
  ADD COLUMN spread_count integer NOT NULL DEFAULT 0,
  ADD COLUMN spread_sum double precision NOT NULL DEFAULT 0,
  ADD COLUMN spread_squares double precision NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE topic_clusters DROP COLUMN spread_squares, DROP COLUMN spread_sum, DROP COLUMN spread_count;
