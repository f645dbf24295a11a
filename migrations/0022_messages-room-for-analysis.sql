-- Up Migration

-- A live message is written twice: when it is captured, then when its analysis result arrives. The
-- result's columns are in no index, so the second write can be a heap-only (HOT) update, which adds no
-- entry to the message's four indexes (the full-text GIN index among them), but only when the row's page
-- has room for the new version. Pages filled to 100 % had none: three updates in four moved the row to
-- another page and indexed it again (measured under a capture load, issue 18). Pages now keep a quarter
-- free for those updates; the rebuild's shadow tables copy the setting.
ALTER TABLE rm_messages SET (fillfactor = 50);

-- Down Migration
ALTER TABLE rm_messages RESET (fillfactor);
