-- Up Migration

-- Every topic command gets an outcome (issue 31, item 6): the command runner appends
-- analysis.topic-command-handled, naming the command's version on the chatbot's stream, so it keeps that
-- version with the queued command. Commands queued before this are given theirs from the journal; a
-- command whose event is no longer there belongs to a deleted chatbot and has nothing left to act on.
ALTER TABLE analysis_commands ADD COLUMN source_stream_version integer;
UPDATE analysis_commands c SET source_stream_version = j.stream_version
  FROM event_journal j WHERE j.event_id = c.source_event_id;
DELETE FROM analysis_commands WHERE source_stream_version IS NULL;
ALTER TABLE analysis_commands ALTER COLUMN source_stream_version SET NOT NULL;

-- How far each chatbot's topic commands have been handled, from analysis.topic-command-handled: the
-- version on the chatbot's stream of the last one. It is written in the transaction that applies the
-- command's topic events to rm_topics, so the gateway, reading both in one statement, knows which
-- commands rm_topics already holds and decides a new command on the ones after it too
-- (services/gateway/src/topics/commands.ts).
CREATE TABLE rm_topic_commands (
  org_id uuid NOT NULL,
  chatbot_id uuid PRIMARY KEY,
  last_command_version integer NOT NULL,
  updated_at timestamptz NOT NULL
);
SELECT cas_protect_read_model('public.rm_topic_commands'::regclass);
-- The commands handled before outcomes existed: every topic command in the journal but the ones still
-- queued (a command the analysis consumer has not read yet counts as handled here: it may be decided
-- on once more, as before). A rebuild from the log starts from the first outcome instead.
INSERT INTO rm_topic_commands (org_id, chatbot_id, last_command_version, updated_at)
SELECT j.org_id, j.stream_id, max(j.stream_version), now()
  FROM event_journal j
 WHERE j.stream_type = 'chatbot'
   AND j.type IN ('chatbot.topic-rename-requested', 'chatbot.topic-hide-requested',
                  'chatbot.topic-unhide-requested', 'chatbot.topic-merge-requested',
                  'chatbot.topic-creation-requested')
   AND NOT EXISTS (SELECT FROM analysis_commands c WHERE c.source_event_id = j.event_id AND c.status = 'pending')
 GROUP BY j.org_id, j.stream_id;

-- Down Migration
DROP TABLE rm_topic_commands;
ALTER TABLE analysis_commands DROP COLUMN source_stream_version;
