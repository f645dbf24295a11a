-- Up Migration

-- Chatbot state, kept by the gateway as an inline projection of the chatbot streams: updated in the
-- transaction that appends the events, so a read right after a command sees it.
CREATE TABLE chatbots (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL,
  settings jsonb NOT NULL DEFAULT '{}',
  api_key_prefix text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  stream_version integer NOT NULL
);
CREATE INDEX chatbots_by_org ON chatbots (org_id, created_at, id);

-- The key index: the SHA-256 of each chatbot's current key (never the key). Rotation replaces the row and
-- deletion removes it in the command's transaction, so the old key is refused the moment it commits.
CREATE TABLE chatbot_api_keys (
  key_hash bytea PRIMARY KEY CHECK (octet_length(key_hash) = 32),
  chatbot_id uuid NOT NULL UNIQUE REFERENCES chatbots (id) ON DELETE CASCADE,
  org_id uuid NOT NULL,
  created_at timestamptz NOT NULL
);

-- Down Migration
DROP TABLE chatbot_api_keys;
DROP TABLE chatbots;
