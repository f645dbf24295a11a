-- Up Migration

-- Dashboard identity: organizations, their users, server-side sessions and sign-in throttling.
-- Every timestamp is written by the application from its injected clock, never by now(), so tests can
-- move time without sleeping.

CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL
);

-- `email` is stored trimmed and lowercased by the application, so the plain unique constraint makes it
-- unique case-insensitively. (No CHECK against lower(): Postgres's lower() follows the database
-- collation and may disagree with JavaScript's toLowerCase() outside ASCII.)
CREATE TABLE users (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  email text NOT NULL UNIQUE,
  name text NOT NULL,
  -- The user who signs up creates the organization and owns it.
  role text NOT NULL CHECK (role IN ('owner', 'member')),
  -- An argon2id PHC string ($argon2id$v=19$m=…,t=…,p=…$salt$hash).
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX users_org_id_idx ON users (org_id);

-- One row per signed-in session; the row is the truth, so deleting it revokes the session at once.
-- `sid` is the SHA-256 of the session id carried in the cookie, so a copy of this table (a backup, a
-- read replica) does not hand out live sessions. Deleting a user deletes their sessions.
-- created_at is the sign-in time (the id is regenerated at every sign-in): the absolute expiry counts
-- from it. expires_at = min(last_seen_at + idle, created_at + absolute) as of the last write, for sweeping.
CREATE TABLE sessions (
  sid text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  data jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);

-- Sign-in attempts per (lowercased) email in a fixed window, counted here rather than in memory so the
-- throttle holds across gateway instances and restarts. Unknown emails are counted too, so a 429 tells
-- nothing about whether an account exists. A successful sign-in deletes the row.
CREATE TABLE login_failures (
  email text PRIMARY KEY,
  failures integer NOT NULL CHECK (failures >= 1),
  window_started_at timestamptz NOT NULL
);
CREATE INDEX login_failures_window_started_at_idx ON login_failures (window_started_at);

-- Secrets the service generates for itself when configuration gives none (the session cookie signing
-- secret), kept so that every instance and every restart agrees on them.
CREATE TABLE app_secrets (
  name text PRIMARY KEY,
  value text NOT NULL
);

-- Down Migration
DROP TABLE app_secrets;
DROP TABLE login_failures;
DROP TABLE sessions;
DROP TABLE users;
DROP TABLE organizations;
