-- Up Migration

-- What became of each topic command (issue 31, item 6): one row per chatbot.topic-*-requested event, from
-- it (what was asked, by whom, when: status pending) and from its analysis.topic-command-handled (the
-- outcome, its reason, when). The two come on different streams, so either may be applied first: a row
-- made by the outcome has no topic and no requested_at until its request is applied, and the request
-- never overwrites an outcome (services/projector/src/projections/topic-command-log.ts). Read by GET
-- /api/v1/chatbots/:id/topics/commands, the latest first. Rows are kept for the chatbot's life: commands
-- are made by hand, a few a day at most, and the list reads the latest by the index below.
CREATE TABLE rm_topic_command_log (
  command_id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  command_stream_version integer NOT NULL,
  type text NOT NULL CHECK (type IN ('rename', 'hide', 'unhide', 'merge', 'create')),
  topic_id text,
  into_topic_id text,
  label text,
  actor_id text,
  requested_at timestamptz,
  status text NOT NULL CHECK (status IN ('pending', 'applied', 'unchanged', 'refused', 'failed')),
  reason text,
  handled_at timestamptz
);
CREATE INDEX rm_topic_command_log_latest ON rm_topic_command_log (chatbot_id, command_stream_version DESC);
SELECT cas_protect_read_model('public.rm_topic_command_log'::regclass);

-- The commands of the journal as the projection would have made them (a rebuild makes the same).
INSERT INTO rm_topic_command_log (command_id, org_id, chatbot_id, command_stream_version, type, topic_id,
  into_topic_id, label, actor_id, requested_at, status)
SELECT j.event_id, j.org_id, j.chatbot_id, j.stream_version,
       CASE j.type WHEN 'chatbot.topic-rename-requested' THEN 'rename'
                   WHEN 'chatbot.topic-hide-requested' THEN 'hide'
                   WHEN 'chatbot.topic-unhide-requested' THEN 'unhide'
                   WHEN 'chatbot.topic-merge-requested' THEN 'merge'
                   ELSE 'create' END,
       j.payload->>'topicId', j.payload->>'into', j.payload->>'label', j.metadata->>'actorId', j.occurred_at,
       'pending'
  FROM event_journal j
 WHERE j.stream_type = 'chatbot'
   AND j.type IN ('chatbot.topic-rename-requested', 'chatbot.topic-hide-requested',
                  'chatbot.topic-unhide-requested', 'chatbot.topic-merge-requested',
                  'chatbot.topic-creation-requested')
   AND NOT EXISTS (SELECT FROM rm_deleted_chatbots d WHERE d.chatbot_id = j.chatbot_id);
UPDATE rm_topic_command_log c
   SET status = j.payload->>'outcome', reason = j.payload->>'reason', handled_at = j.occurred_at
  FROM event_journal j
 WHERE j.type = 'analysis.topic-command-handled'
   AND (j.payload->>'commandEventId')::uuid = c.command_id;

-- Down Migration
DROP TABLE rm_topic_command_log;
