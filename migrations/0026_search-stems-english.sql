-- Up Migration

-- Full-text search stems (issue 30): `q=crash` found "crash" but not "crashes", "crashed" or "crashing",
-- and `q=cancel` missed "cancelled", because messages were indexed with the 'simple' configuration
-- (lower-cased words, nothing more). They are now indexed with 'english', the Snowball stemmer: a word
-- and its inflections share one lexeme ("crashes", "crashing" -> crash; "cancelled", "canceling" ->
-- cancel), and the query service parses `q` with the same configuration (repositories/conversations.ts).
--
-- One configuration for every chatbot, not one per chatbot language: the vector is a generated column of
-- the message row, so a per-chatbot language would have to travel with every message the projector
-- writes. The projector cannot look it up: a chatbot's events and its conversations' events are in
-- different partitions (topics in Kafka mode, virtual partitions of the journal in embedded mode),
-- applied by concurrent transactions, so a message is often projected before its chatbot's settings
-- (tried: which language a message got depended on timing, and a rebuild could differ from the live
-- tables). It would have to come with the capture (the gateway has the settings), a new field of the
-- sealed messages-captured event; and a change of language would leave earlier messages in the old
-- one, so `q` would be parsed in every language the chatbot has had. The stemmer only strips English
-- endings, and the query goes through the same stemmer as the text, so a word in another language still
-- finds itself.
-- What 'english' drops: its stop words ("the", "and", "is", ...) are not indexed, and a query of stop
-- words only matches nothing.
--
-- The column is recomputed for every row (a table rewrite, as long as indexing the messages once): a
-- generated column's expression cannot be altered before PostgreSQL 17, and 14 is supported. Dropping
-- the column drops its GIN index, built again below.
ALTER TABLE rm_messages DROP COLUMN content_search;
ALTER TABLE rm_messages
  ADD COLUMN content_search tsvector GENERATED ALWAYS AS (to_tsvector('english', coalesce(content, ''))) STORED;
CREATE INDEX rm_messages_search ON rm_messages USING gin (content_search);

-- Down Migration
ALTER TABLE rm_messages DROP COLUMN content_search;
ALTER TABLE rm_messages
  ADD COLUMN content_search tsvector GENERATED ALWAYS AS (to_tsvector('simple', coalesce(content, ''))) STORED;
CREATE INDEX rm_messages_search ON rm_messages USING gin (content_search);
