-- Up Migration

-- Issue 19: no service reads another service's tables. The query service read the gateway's `chatbots`
-- (its inline projection, which holds what capture and the commands need) and its `audit_log`.

-- The chatbot read model, the projector's, built from the chatbot events like the other read models and
-- rebuilt with them (services/projector/src/projections/chatbot-fold.ts). chatbot.deleted removes the row.
-- The projector of an upgraded installation has already passed the chatbots' events, and its rebuild only
-- runs when asked: the chatbots that exist are copied once from the gateway's table, at their stream
-- version, which the projector's writes then continue (a row only moves forward in stream version).
CREATE TABLE rm_chatbots (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  name text NOT NULL,
  api_key_prefix text NOT NULL,
  settings jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  stream_version integer NOT NULL
);
CREATE INDEX rm_chatbots_by_org ON rm_chatbots (org_id, created_at, id);
INSERT INTO rm_chatbots (id, org_id, name, api_key_prefix, settings, created_at, stream_version)
SELECT id, org_id, name, api_key_prefix, settings, created_at, stream_version FROM chatbots;
SELECT cas_protect_read_model('public.rm_chatbots'::regclass);

-- The one sign of a chatbot's deletion (libs/keyring: its data key destroyed, in the transaction that
-- deletes it), published to the query role, which may not read the keys: chatbot and organization ids
-- only, of the organization of its transaction. The query answers 404 for a deleted chatbot, and for its
-- conversations, the moment the deletion commits, without waiting for the projector.
CREATE VIEW deleted_chatbots WITH (security_barrier) AS
  SELECT chatbot_id, org_id FROM chatbot_data_keys
   WHERE wrapped_key IS NULL AND org_id = cas_current_org();
GRANT SELECT ON deleted_chatbots TO cas_reader;

-- The audit log stays the gateway's inline projection: an entry names the actor with the email and name
-- they had when they acted, which no event carries (events name the actor by id only, and the users
-- table is the gateway's). What the query service may read of it is this view, the log's published
-- contract: the gateway may reshape its table as long as the view keeps these columns. A view reads as
-- its owner, past the table's row-level security (security_invoker needs PostgreSQL 15; 14 is supported),
-- so it confines itself to the organization of the transaction, as deleted_chatbots does.
CREATE VIEW audit_entries WITH (security_barrier) AS
  SELECT event_id, org_id, position, occurred_at, action, actor_id, actor_email, actor_name, target_type,
         target_id, target_name, details
    FROM audit_log WHERE org_id = cas_current_org();
GRANT SELECT ON audit_entries TO cas_reader;

-- Down Migration
DROP VIEW audit_entries;
DROP VIEW deleted_chatbots;
DROP TABLE rm_chatbots;
