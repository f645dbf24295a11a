-- Up Migration

-- Themes (issue 31, item 3): each chatbot's topics grouped into a handful of labelled themes
-- (services/analysis/src/topics/themes.ts). The analysis side keeps the last grouping, and the topics it
-- was made of (signature: their ids and labels), so that it groups anew only when they change; each new
-- grouping is an analysis.themes-assigned event on the chatbot's topic stream, from which the projector
-- builds rm_themes, so a replay rebuilds the same themes.
CREATE TABLE topic_themes (
  chatbot_id uuid PRIMARY KEY REFERENCES topic_models ON DELETE CASCADE,
  signature text NOT NULL,
  themes jsonb NOT NULL
);

-- The read side: each chatbot's themes, with their topics (canonical ids: none merged away when grouped).
CREATE TABLE rm_themes (
  org_id uuid NOT NULL,
  chatbot_id uuid NOT NULL,
  id text NOT NULL,
  label text NOT NULL,
  topic_ids text[] NOT NULL,
  position integer NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (chatbot_id, id)
);
CREATE INDEX rm_themes_topics ON rm_themes USING gin (topic_ids);
SELECT cas_protect_read_model('public.rm_themes'::regclass);

-- Down Migration
DROP TABLE rm_themes;
DROP TABLE topic_themes;
