-- Up Migration

-- The label a topic had when its rename was committed (chatbot.topic-rename-requested v2's
-- previousLabel), so that the topic command list says "Rename 'old' to 'new'" once the old label is gone
-- from rm_topics. Renames committed as v1 have none: null, as a rebuild reads them (v1 upcasts to v2 with
-- previousLabel null). Filled from the journal for any v2 rename already there.
ALTER TABLE rm_topic_command_log ADD COLUMN previous_label text;
UPDATE rm_topic_command_log c SET previous_label = j.payload->>'previousLabel'
  FROM event_journal j
 WHERE j.event_id = c.command_id AND j.type = 'chatbot.topic-rename-requested' AND j.version >= 2;

-- Down Migration
ALTER TABLE rm_topic_command_log DROP COLUMN previous_label;
