-- Up Migration

-- Conversation signals (issue 32: escalation, bot failure, repetition, frustration, resolution,
-- abandonment, and a chatbot's own). The analysis service keeps, with each message's result, the cues
-- the language model found in it (services/analysis/src/signals/cues.ts), the message's time and place
-- in its capture, and an end-user message's embedding (repetition compares them); a conversation's
-- signals are decided again from them whenever a message is analysed, and once more when its quiet
-- period has passed (abandonment): analysis_signal_state holds what was last announced
-- (analysis.signals-detected) and when to look again. Rows analysed before this have no cues: they
-- count in no signal until re-analysed (npm run reanalyze).
ALTER TABLE analysis_results
  ADD COLUMN sent_at timestamptz,
  ADD COLUMN position integer NOT NULL DEFAULT 0,
  ADD COLUMN cues jsonb,
  ADD COLUMN vector real[];

CREATE TABLE analysis_signal_state (
  conversation_id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  analyzer text NOT NULL,
  signals jsonb NOT NULL,
  due_at timestamptz,
  settled boolean NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX analysis_signal_state_due ON analysis_signal_state (due_at) WHERE NOT settled;
CREATE INDEX analysis_signal_state_chatbot ON analysis_signal_state (chatbot_id);

-- The read model: each conversation's signals as last announced, with their evidence (message ids).
CREATE TABLE rm_conversation_signals (
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  conversation_id uuid NOT NULL,
  signal text NOT NULL,
  label text,
  confidence real NOT NULL,
  evidence text[] NOT NULL,
  analyzer text NOT NULL,
  PRIMARY KEY (conversation_id, signal)
);
CREATE INDEX rm_conversation_signals_signal ON rm_conversation_signals (org_id, signal, conversation_id);
CREATE INDEX rm_conversation_signals_chatbot ON rm_conversation_signals (chatbot_id);
SELECT cas_protect_read_model('public.rm_conversation_signals'::regclass);

-- Down Migration
DROP TABLE rm_conversation_signals;
DROP TABLE analysis_signal_state;
ALTER TABLE analysis_results DROP COLUMN vector, DROP COLUMN cues, DROP COLUMN position, DROP COLUMN sent_at;
