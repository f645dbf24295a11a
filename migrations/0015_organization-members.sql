-- Up Migration

-- Teams: a person may belong to several organizations, each time with a role. Until now a user belonged to
-- exactly one organization (users.org_id) as its owner (users.role); each such pair becomes a membership
-- with the same role, so today's single-owner organizations carry over unchanged, and their sessions with
-- them. The gateway keeps these tables in the transaction that appends the organization's events.
CREATE TABLE memberships (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  joined_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, user_id)
);
-- A person's organizations, in the order they joined them (the first is where sign-in lands).
CREATE INDEX memberships_by_user ON memberships (user_id, joined_at, org_id);

INSERT INTO memberships (org_id, user_id, role, joined_at)
SELECT org_id, id, role, created_at FROM users;

ALTER TABLE users DROP COLUMN org_id, DROP COLUMN role;

-- The session holds the organization the person is working in; NULL when they belong to none (removed from
-- their only one) or their current one was deleted. The role is never stored here: every request reads it
-- from memberships along with the session, so a removal or a lowered role applies to the next request of
-- every open session.
ALTER TABLE sessions ALTER COLUMN org_id DROP NOT NULL;
ALTER TABLE sessions DROP CONSTRAINT sessions_org_id_fkey;
ALTER TABLE sessions ADD CONSTRAINT sessions_org_id_fkey
  FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE SET NULL;

-- Invitations by email. The link carries `<id>.<secret>`; only the SHA-256 of the secret is stored, and it
-- is compared in constant time with the one a link presents. Single use: accepted_at, revoked_at and
-- expires_at end it; the row stays for the list of what happened.
CREATE TABLE invitations (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  secret_hash bytea NOT NULL CHECK (octet_length(secret_hash) = 32),
  invited_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  accepted_by uuid REFERENCES users (id) ON DELETE SET NULL,
  revoked_at timestamptz,
  CHECK (accepted_at IS NULL OR revoked_at IS NULL)
);
CREATE INDEX invitations_pending_by_org ON invitations (org_id, created_at)
  WHERE accepted_at IS NULL AND revoked_at IS NULL;

-- The audit log: who did what in an organization, one row per committed event (an end-user erasure's
-- conversation.erased events make one row), written by the gateway in the transaction that appends them,
-- so it is there as soon as the action returns. It is not rebuilt from the log: the journal purges a
-- deleted chatbot's events and an erased conversation's, and the log must keep who created, changed and
-- deleted them. `position` is the journal position of the (first) event: the order, newest first.
-- Actor email and name are as they were at the time.
CREATE TABLE audit_log (
  event_id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  position bigint NOT NULL,
  occurred_at timestamptz NOT NULL,
  action text NOT NULL,
  actor_id uuid,
  actor_email text,
  actor_name text,
  target_type text,
  target_id text,
  target_name text,
  details jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_by_org ON audit_log (org_id, position DESC);

-- The query service reads it confined to the organization of its transaction, like every read model.
SELECT cas_protect_read_model('audit_log');

-- Down Migration
DROP TABLE audit_log;
DROP TABLE invitations;
DELETE FROM sessions WHERE org_id IS NULL;
ALTER TABLE sessions DROP CONSTRAINT sessions_org_id_fkey;
ALTER TABLE sessions ADD CONSTRAINT sessions_org_id_fkey
  FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE;
ALTER TABLE sessions ALTER COLUMN org_id SET NOT NULL;
ALTER TABLE users ADD COLUMN org_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
  ADD COLUMN role text CHECK (role IN ('owner', 'member'));
-- Back to one organization per person: the first they joined, as owner only if they own it.
UPDATE users u SET org_id = m.org_id, role = CASE WHEN m.role = 'owner' THEN 'owner' ELSE 'member' END
  FROM (SELECT DISTINCT ON (user_id) user_id, org_id, role FROM memberships
         ORDER BY user_id, joined_at, org_id) m
 WHERE m.user_id = u.id;
DELETE FROM users WHERE org_id IS NULL;
ALTER TABLE users ALTER COLUMN org_id SET NOT NULL, ALTER COLUMN role SET NOT NULL;
CREATE INDEX users_org_id_idx ON users (org_id);
DROP TABLE memberships;
