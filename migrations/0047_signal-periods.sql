-- Up Migration

-- When each of a chatbot's signals was on (issue 32): one row per period, opened by the chatbot.created or
-- chatbot.settings-changed that turned the signal on (or added the custom signal), closed by the one that
-- turned it off (or removed it). Written by the projector from the chatbot stream (services/projector/src/
-- projections/signal-periods.ts), so a rebuild makes it again from the events; read by the signals report
-- for the conversations checked for a signal (services/query/src/repositories/signal-coverage.ts).
-- `since_creation`: opened by chatbot.created, so every conversation of the chatbot up to `off_since` was
-- checked, whatever the time its messages carry. The stream versions make the projection idempotent: an
-- event at or below the highest version a chatbot's rows record changes nothing.
CREATE TABLE rm_signal_periods (
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  signal text NOT NULL,
  on_since timestamptz NOT NULL,
  since_creation boolean NOT NULL,
  on_version integer NOT NULL,
  off_since timestamptz,
  off_version integer,
  PRIMARY KEY (chatbot_id, signal, on_version),
  CHECK ((off_since IS NULL) = (off_version IS NULL))
);
SELECT cas_protect_read_model('public.rm_signal_periods'::regclass);

-- The periods of the chatbots already projected, from the journal's chatbot events as the projection
-- folds them: the signals on after each event (the built-in ones not in signals.disabled, and the
-- custom ones named as customSignalName names them: custom: and the slug of the label's NFKD letters
-- and digits), a period opening where a signal turns on and closing where it turns off. A rebuild makes
-- the same rows from the events.
WITH ev AS (
  SELECT j.org_id, j.stream_id AS chatbot_id, j.stream_version AS v, j.occurred_at AS at, j.type,
         j.payload -> 'settings' -> 'signals' AS s
    FROM event_journal j JOIN rm_chatbots b ON b.id = j.stream_id
   WHERE j.stream_type = 'chatbot' AND j.type IN ('chatbot.created', 'chatbot.settings-changed')
),
on_sets AS (
  SELECT ev.org_id, ev.chatbot_id, ev.v, ev.at, ev.type, ARRAY(
           SELECT b FROM unnest(ARRAY['escalation', 'bot_failure', 'repetition', 'frustration', 'resolution',
                                      'abandonment']) AS b
            WHERE NOT coalesce(jsonb_typeof(ev.s -> 'disabled') = 'array' AND ev.s -> 'disabled' ? b, false)
           UNION
           SELECT 'custom:' || coalesce(nullif(rtrim(left(trim(BOTH '-' FROM
                    regexp_replace(lower(normalize(c ->> 'label', NFKD)), '[^a-z0-9]+', '-', 'g')), 64), '-'), ''),
                    'signal')
             FROM jsonb_array_elements(CASE WHEN jsonb_typeof(ev.s -> 'custom') = 'array' THEN ev.s -> 'custom'
                                            ELSE '[]' END) AS c
            WHERE jsonb_typeof(c -> 'label') = 'string'
         ) AS on_set
    FROM ev
),
named AS (SELECT DISTINCT chatbot_id, unnest(on_set) AS signal FROM on_sets),
states AS (
  SELECT o.org_id, o.chatbot_id, n.signal, o.v, o.at, o.type, n.signal = ANY (o.on_set) AS is_on,
         lag(n.signal = ANY (o.on_set)) OVER (PARTITION BY o.chatbot_id, n.signal ORDER BY o.v) AS was_on
    FROM on_sets o JOIN named n ON n.chatbot_id = o.chatbot_id
),
edges AS (
  SELECT *, lead(at) OVER w AS next_at, lead(v) OVER w AS next_v
    FROM states WHERE is_on <> coalesce(was_on, false)
  WINDOW w AS (PARTITION BY chatbot_id, signal ORDER BY v)
)
INSERT INTO rm_signal_periods (org_id, chatbot_id, signal, on_since, since_creation, on_version, off_since,
                               off_version)
SELECT org_id, chatbot_id, signal, at, type = 'chatbot.created', v, next_at, next_v FROM edges WHERE is_on;

-- Down Migration
DROP TABLE rm_signal_periods;
