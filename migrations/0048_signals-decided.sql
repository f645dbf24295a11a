-- Up Migration

-- When each conversation's signals were last decided (issue 32): a conversation counts as checked for a
-- signal when its signals were decided while the signal was on (services/query/src/repositories/
-- signal-coverage.ts), not when its last message was sent: one captured, or imported, after the signal
-- was turned off is analysed without it, whatever the time its messages carry. The analysis service
-- decides a conversation's signals again in the transaction of each analysis of its messages
-- (analysis.messages-analyzed) and announces them only when they change (analysis.signals-detected, also
-- from the quiet-period sweep and the LLM refiner), so the time is the later of the conversation's last
-- of either. Its own table, not a column of rm_conversations: the signals model writes it (services/
-- projector/src/projections/signals.ts), and analysis may come before the conversation's row.
CREATE TABLE rm_signals_decided (
  conversation_id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  decided_at timestamptz NOT NULL
);
CREATE INDEX rm_signals_decided_chatbot ON rm_signals_decided (chatbot_id);
SELECT cas_protect_read_model('public.rm_signals_decided'::regclass);

-- The conversations already projected, from the journal's analysis events as the projection folds them
-- (those of a deleted chatbot or an erased conversation are gone from the read models, so are left out).
INSERT INTO rm_signals_decided (conversation_id, org_id, chatbot_id, decided_at)
SELECT j.stream_id, (array_agg(j.org_id))[1], (array_agg(j.chatbot_id))[1], max(j.occurred_at)
  FROM event_journal j
 WHERE j.stream_type = 'analysis' AND j.type IN ('analysis.messages-analyzed', 'analysis.signals-detected')
   AND EXISTS (SELECT FROM rm_conversations c WHERE c.id = j.stream_id)
 GROUP BY j.stream_id;

-- Down Migration
DROP TABLE rm_signals_decided;
