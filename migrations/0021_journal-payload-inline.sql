-- Up Migration

-- A capture's `conversation.messages-captured` payload (ten messages: about 2.7 KB, sealed) went past the
-- default TOAST threshold (about 2 KB): Postgres first tried to compress it, which fails on ciphertext,
-- then wrote it out of line, a second heap row and index entry in the TOAST table. Rows now stay inline
-- up to a page, and a payload still larger goes out of line without a compression attempt (issue 18).
ALTER TABLE event_journal SET (toast_tuple_target = 8160);
ALTER TABLE event_journal ALTER COLUMN payload SET STORAGE EXTERNAL;

-- Down Migration
ALTER TABLE event_journal ALTER COLUMN payload SET STORAGE EXTENDED;
ALTER TABLE event_journal RESET (toast_tuple_target);
