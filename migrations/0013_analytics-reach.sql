-- Up Migration

-- Analytics at scale (issue 8). The overview counted distinct conversations and end users over the hourly
-- activity rows (a year of a busy organization: a million rows), and every sum read one row per chatbot
-- and hour. What follows lets an overview or a sentiment trend of a year read at most a few thousand
-- rows, and still count exactly. The projector keeps it all (services/projector/src/projections/rollups.ts);
-- this migration fills it from the read models already there.

-- Distinct counts without DISTINCT. Take the hours in which one conversation (or one end user) was
-- active, in order, each row pointing to the next one (next_hour, null on the last). It was active in
-- [from, to) exactly when its last active hour before `to` is in range, and exactly one of its rows is
-- that hour: the one with from <= hour < to and next_hour >= to (or null). So the number active in range
-- is a count of rows, in two parts:
--   - rows whose next is null (the last active hour so far): counted per hour in the rollups
--     (last_active_conversations, last_active_users, additive), summed over the range;
--   - rows in range whose next is at or after `to`: none for a range ending now (their next would lie
--     in the future), and otherwise the few that span `to`.
-- gap_class = floor(log2(hours to the next)) finds the spanning rows with short index ranges: a row of
-- class k spans `to` only if its next hour is in [to, to + 2^(k+1) hours), whatever the history around.

-- Conversations: their activity rows already are these hours (a conversation belongs to one chatbot).
ALTER TABLE rm_hourly_activity
  ADD COLUMN next_hour timestamptz,
  ADD COLUMN gap_class smallint
    GENERATED ALWAYS AS (floor(log(2, extract(epoch FROM next_hour - hour) / 3600))) STORED;
UPDATE rm_hourly_activity a SET next_hour = n.next_hour
  FROM (SELECT chatbot_id, hour, conversation_id,
               lead(hour) OVER (PARTITION BY conversation_id ORDER BY hour) AS next_hour
          FROM rm_hourly_activity) n
 WHERE n.next_hour IS NOT NULL
   AND (a.chatbot_id, a.hour, a.conversation_id) = (n.chatbot_id, n.hour, n.conversation_id);
CREATE INDEX rm_hourly_activity_spanning ON rm_hourly_activity (org_id, gap_class, next_hour)
  INCLUDE (hour, chatbot_id) WHERE next_hour IS NOT NULL;
-- The projector finds a conversation's hour at or before a new one (the new one's predecessor) here.
DROP INDEX rm_hourly_activity_conversation;
CREATE INDEX rm_hourly_activity_conversation ON rm_hourly_activity (conversation_id, hour);

-- End users: the hours with at least one activity row of theirs (`conversations` of them), per chatbot
-- and per organization (an end-user id seen on two chatbots is one user of the organization).
CREATE TABLE rm_chatbot_user_hours (
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  end_user_id text NOT NULL,
  hour timestamptz NOT NULL,
  conversations integer NOT NULL,
  next_hour timestamptz,
  gap_class smallint GENERATED ALWAYS AS (floor(log(2, extract(epoch FROM next_hour - hour) / 3600))) STORED,
  PRIMARY KEY (chatbot_id, end_user_id, hour)
);
CREATE INDEX rm_chatbot_user_hours_spanning ON rm_chatbot_user_hours (chatbot_id, gap_class, next_hour)
  INCLUDE (hour) WHERE next_hour IS NOT NULL;
INSERT INTO rm_chatbot_user_hours (org_id, chatbot_id, end_user_id, hour, conversations, next_hour)
SELECT org_id, chatbot_id, end_user_id, hour, count(*),
       lead(hour) OVER (PARTITION BY chatbot_id, end_user_id ORDER BY hour)
  FROM rm_hourly_activity WHERE end_user_id IS NOT NULL
 GROUP BY org_id, chatbot_id, end_user_id, hour;

CREATE TABLE rm_org_user_hours (
  org_id uuid NOT NULL,
  end_user_id text NOT NULL,
  hour timestamptz NOT NULL,
  conversations integer NOT NULL,
  next_hour timestamptz,
  gap_class smallint GENERATED ALWAYS AS (floor(log(2, extract(epoch FROM next_hour - hour) / 3600))) STORED,
  PRIMARY KEY (org_id, end_user_id, hour)
);
CREATE INDEX rm_org_user_hours_spanning ON rm_org_user_hours (org_id, gap_class, next_hour)
  INCLUDE (hour) WHERE next_hour IS NOT NULL;
INSERT INTO rm_org_user_hours (org_id, end_user_id, hour, conversations, next_hour)
SELECT org_id, end_user_id, hour, count(*), lead(hour) OVER (PARTITION BY org_id, end_user_id ORDER BY hour)
  FROM rm_hourly_activity WHERE end_user_id IS NOT NULL
 GROUP BY org_id, end_user_id, hour;

-- One row per end user of an organization: the projector locks it while it relinks that user's hours, so
-- that two projector instances never relink the same user at once (rows, unlike advisory locks, are not
-- limited in number per transaction).
CREATE TABLE rm_org_end_users (
  org_id uuid NOT NULL,
  end_user_id text NOT NULL,
  PRIMARY KEY (org_id, end_user_id)
);
INSERT INTO rm_org_end_users SELECT DISTINCT org_id, end_user_id FROM rm_org_user_hours;

-- The counts of last active hours, per chatbot and hour.
ALTER TABLE rm_hourly_stats
  ADD COLUMN last_active_conversations integer NOT NULL DEFAULT 0,
  ADD COLUMN last_active_users integer NOT NULL DEFAULT 0;
UPDATE rm_hourly_stats s SET last_active_conversations = n.conversations, last_active_users = n.users
  FROM (SELECT chatbot_id, hour, sum(c) AS conversations, sum(u) AS users FROM (
          SELECT chatbot_id, hour, 1 AS c, 0 AS u FROM rm_hourly_activity WHERE next_hour IS NULL
          UNION ALL
          SELECT chatbot_id, hour, 0, 1 FROM rm_chatbot_user_hours WHERE next_hour IS NULL) x
         GROUP BY 1, 2) n
 WHERE (s.chatbot_id, s.hour) = (n.chatbot_id, n.hour);

-- The whole organization's hourly rollups: the sums of its chatbots' rows, and its own counts of last
-- active hours. A year of an organization is at most 8,784 rows here, however many chatbots it has.
CREATE TABLE rm_org_hourly_stats (
  org_id uuid NOT NULL,
  hour timestamptz NOT NULL,
  messages integer NOT NULL DEFAULT 0,
  user_messages integer NOT NULL DEFAULT 0,
  assistant_messages integer NOT NULL DEFAULT 0,
  system_messages integer NOT NULL DEFAULT 0,
  tool_messages integer NOT NULL DEFAULT 0,
  sentiment_sum numeric NOT NULL DEFAULT 0,
  sentiment_count integer NOT NULL DEFAULT 0,
  positive integer NOT NULL DEFAULT 0,
  neutral integer NOT NULL DEFAULT 0,
  negative integer NOT NULL DEFAULT 0,
  last_active_conversations integer NOT NULL DEFAULT 0,
  last_active_users integer NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, hour)
);
INSERT INTO rm_org_hourly_stats
SELECT org_id, hour, sum(messages), sum(user_messages), sum(assistant_messages), sum(system_messages),
       sum(tool_messages), sum(sentiment_sum), sum(sentiment_count), sum(positive), sum(neutral),
       sum(negative), sum(last_active_conversations), 0
  FROM rm_hourly_stats GROUP BY org_id, hour;
UPDATE rm_org_hourly_stats s SET last_active_users = n.users
  FROM (SELECT org_id, hour, count(*) AS users FROM rm_org_user_hours WHERE next_hour IS NULL
         GROUP BY 1, 2) n
 WHERE (s.org_id, s.hour) = (n.org_id, n.hour);

-- Topic counts per chatbot and UTC day: a range reads its whole days here, and only the hours of its
-- partial first and last day from rm_hourly_topics.
CREATE TABLE rm_daily_topics (
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  day timestamptz NOT NULL,
  topic text NOT NULL,
  messages integer NOT NULL,
  PRIMARY KEY (chatbot_id, day, topic)
);
CREATE INDEX rm_daily_topics_org ON rm_daily_topics (org_id, day);
INSERT INTO rm_daily_topics
SELECT org_id, chatbot_id, date_trunc('day', hour, 'UTC'), topic, sum(messages)
  FROM rm_hourly_topics GROUP BY 1, 2, 3, 4;

-- The query service reads them under row-level security, like every read model.
SELECT cas_protect_read_model(t::regclass)
  FROM unnest(ARRAY['rm_chatbot_user_hours', 'rm_org_user_hours', 'rm_org_end_users', 'rm_org_hourly_stats',
                    'rm_daily_topics']) t;

ANALYZE rm_hourly_activity, rm_chatbot_user_hours, rm_org_user_hours, rm_org_end_users, rm_hourly_stats,
        rm_org_hourly_stats, rm_daily_topics;

-- Down Migration
DROP TABLE rm_daily_topics, rm_org_hourly_stats, rm_org_end_users, rm_org_user_hours, rm_chatbot_user_hours;
ALTER TABLE rm_hourly_stats DROP COLUMN last_active_users, DROP COLUMN last_active_conversations;
DROP INDEX rm_hourly_activity_spanning;
DROP INDEX rm_hourly_activity_conversation;
CREATE INDEX rm_hourly_activity_conversation ON rm_hourly_activity (conversation_id);
ALTER TABLE rm_hourly_activity DROP COLUMN gap_class, DROP COLUMN next_hour;
