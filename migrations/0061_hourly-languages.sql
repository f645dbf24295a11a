-- Up Migration

-- The analytics overview's language share (issues 31/32) from an hourly rollup, as its other figures:
-- read from rm_messages (0059), its cost grew with the range's end-user messages (a sequential scan of
-- 13,896 buffers for an organization's 30 days of 50,000 conversations, bench/FINDINGS.md, lang2).
-- One row per chatbot, UTC hour and detected language: the end-user messages of that hour whose stored
-- language is that one ('und' and NULL, not detected, are not counted). The projector keeps it with the
-- other rollups, in the batch's transaction, from each message's stored row before and after the batch
-- (services/projector/src/projections/message-fold.ts), so a redelivered event, a re-analysis that
-- detects another language and an erasure move the counts as rm_messages moves; a count taken to zero
-- disappears. A chatbot's rows go with it.
CREATE TABLE rm_hourly_languages (
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  hour timestamptz NOT NULL,
  language text NOT NULL,
  messages integer NOT NULL,
  PRIMARY KEY (chatbot_id, hour, language)
);
CREATE INDEX rm_hourly_languages_org ON rm_hourly_languages (org_id, hour);
SELECT cas_protect_read_model('public.rm_hourly_languages'::regclass);

-- The messages already projected, counted as the projector counts them.
INSERT INTO rm_hourly_languages (org_id, chatbot_id, hour, language, messages)
SELECT org_id, chatbot_id, date_trunc('hour', sent_at, 'UTC'), language, count(*)
  FROM rm_messages
 WHERE role = 'user' AND sent_at IS NOT NULL AND language IS NOT NULL AND language <> 'und'
 GROUP BY 1, 2, 3, 4;
ANALYZE rm_hourly_languages;

-- The end-user messages' index of 0059 served only the share read from rm_messages: every capture of
-- an end user's message wrote an entry to it.
DROP INDEX rm_messages_user_sent;

-- Down Migration
CREATE INDEX rm_messages_user_sent ON rm_messages (chatbot_id, sent_at) WHERE role = 'user';
DROP TABLE rm_hourly_languages;
