-- Up Migration

-- Journal readers read below the oldest running transaction (libs/eventlog/src/journal.ts), since any
-- of them may still append. A transaction that never appends (a projector's batch) can say so with a
-- transaction-scoped advisory lock, and readers then pass it while it runs (issue 18: the projector's
-- batches held the relay, and with it the Kafka consumers, back by their length). The lock comes with
-- the transaction-local setting `cas.never_appends`, which this trigger reads: an append in a marked
-- transaction fails, so the mark is a promise the journal keeps.
CREATE FUNCTION event_journal_refuse_never_appending() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('cas.never_appends', true) = 'on' THEN
    RAISE EXCEPTION 'this transaction was marked as never appending to the event journal'
      USING ERRCODE = 'P0001', HINT = 'markNeverAppends: append in a transaction of its own';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER event_journal_refuse_never_appending
  BEFORE INSERT ON event_journal
  FOR EACH STATEMENT EXECUTE FUNCTION event_journal_refuse_never_appending();

-- Down Migration
DROP TRIGGER event_journal_refuse_never_appending ON event_journal;
DROP FUNCTION event_journal_refuse_never_appending();
