-- Up Migration

-- Sign-in failures counted per (email, client address) as well as per email (helper fix5): five wrong
-- passwords from one address lock only that address out of that email, so nobody who knows an email can
-- keep its owner out; a much higher count over every address (client '') still slows a guesser who
-- rotates addresses. Rows counted before this migration are the email-wide ones.
ALTER TABLE login_failures ADD COLUMN client text NOT NULL DEFAULT '';
ALTER TABLE login_failures DROP CONSTRAINT login_failures_pkey;
ALTER TABLE login_failures ADD PRIMARY KEY (email, client);

-- Down Migration
DELETE FROM login_failures WHERE client <> '';
ALTER TABLE login_failures DROP CONSTRAINT login_failures_pkey;
ALTER TABLE login_failures DROP COLUMN client;
ALTER TABLE login_failures ADD PRIMARY KEY (email);
