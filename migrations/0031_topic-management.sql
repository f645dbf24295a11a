-- Up Migration

-- Topics a lead can manage (issue 31, item 6): owners and admins rename (the label is then pinned),
-- hide and merge topics (POST /api/v1/chatbots/:id/topics/:topicId/...). A pinned topic keeps its label,
-- and re-clustering leaves it and its members as they are (a user merge's target is pinned too, so the
-- next run never undoes the merge). A hidden topic takes messages as before; the read side leaves it out
-- of analytics lists.
ALTER TABLE topic_clusters ADD COLUMN pinned boolean NOT NULL DEFAULT false,
  ADD COLUMN hidden boolean NOT NULL DEFAULT false;
ALTER TABLE rm_topics ADD COLUMN pinned boolean NOT NULL DEFAULT false,
  ADD COLUMN hidden boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE rm_topics DROP COLUMN hidden, DROP COLUMN pinned;
ALTER TABLE topic_clusters DROP COLUMN hidden, DROP COLUMN pinned;
