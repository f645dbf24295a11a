-- Up Migration

-- PostgreSQL 14 (and older) let PUBLIC, every role, create objects in schema public; 15 no longer does. So on
-- 14 the read-only `cas_query` login (QUERY_DATABASE_URL, confined by row-level security) could create tables
-- and functions in the schema the services read. CREATE on public is revoked from PUBLIC here when the migrating
-- role may: it owns the schema (or is a member of its owner: pg_database_owner on 15+) or is a superuser. Else
-- (a managed 14 where public belongs to the provider's superuser) nothing fails: the service warns at every
-- start with the statement for the schema's owner to run (publicSchemaOpenToAll). The schema's owner keeps
-- CREATE, as does any role granted it by name.
DO $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
    OR EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'public' AND pg_has_role(current_user, nspowner, 'USAGE'))
  THEN
    REVOKE CREATE ON SCHEMA public FROM PUBLIC;
  END IF;
END
$$;

-- Down Migration
-- Nothing: granting every role CREATE on public again would undo a safeguard, not a change of schema.
SELECT 1;
