-- Up Migration

-- Optional refinement of borderline conversation signals by an LLM (SIGNALS_LLM_REFINE=borderline,
-- services/analysis/src/signals/llm-refine.ts). refine_due marks a conversation whose signals include
-- borderline ones the LLM has not judged; llm_verdicts keeps its verdicts (per analyzer, signal and
-- evidence), so deciding the signals again with the same messages does not ask again.
ALTER TABLE analysis_signal_state
  ADD COLUMN refine_due boolean NOT NULL DEFAULT false,
  ADD COLUMN llm_verdicts jsonb NOT NULL DEFAULT '[]';
CREATE INDEX analysis_signal_state_refine_due ON analysis_signal_state (updated_at) WHERE refine_due;

-- Down Migration
DROP INDEX analysis_signal_state_refine_due;
ALTER TABLE analysis_signal_state DROP COLUMN llm_verdicts, DROP COLUMN refine_due;
