-- Up Migration

-- Accent-insensitive search (trial6, bench/FINDINGS.md "A sixth trial"): `q=devolucion` found nothing where
-- `q=devolución` found the conversations, because the 'english' configuration keeps a word's accents, and users
-- (and leads) type words of other languages without them. Messages are now indexed with `cas_search`: the
-- 'english' configuration with the unaccent dictionary before the English stemmer, as PostgreSQL's documentation
-- of unaccent shows, so "devolución", "devolucion" and "Devolución" are one lexeme, and English words stem as
-- before (a word of plain letters is an `asciiword`, whose mapping is left as it was). The query service parses
-- `q` with the same configuration (repositories/conversations.ts SEARCH_CONFIG).
--
-- unaccent is a contrib extension that PostgreSQL marks trusted (since 13): the owner of the database may create
-- it without superuser, as the managed services' application roles can; the embedded server and Debian's
-- packages ship it. Like 0026, the column is recomputed for every row (a table rewrite, as long as indexing
-- the messages once).
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE TEXT SEARCH CONFIGURATION cas_search (COPY = pg_catalog.english);
ALTER TEXT SEARCH CONFIGURATION cas_search
  ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem;
ALTER TABLE rm_messages DROP COLUMN content_search;
ALTER TABLE rm_messages
  ADD COLUMN content_search tsvector GENERATED ALWAYS AS (to_tsvector('cas_search', coalesce(content, ''))) STORED;
CREATE INDEX rm_messages_search ON rm_messages USING gin (content_search);

-- Down Migration
ALTER TABLE rm_messages DROP COLUMN content_search;
ALTER TABLE rm_messages
  ADD COLUMN content_search tsvector GENERATED ALWAYS AS (to_tsvector('english', coalesce(content, ''))) STORED;
CREATE INDEX rm_messages_search ON rm_messages USING gin (content_search);
DROP TEXT SEARCH CONFIGURATION cas_search;
DROP EXTENSION IF EXISTS unaccent;
