-- Up Migration

-- Rebuilds of a projection from the event log (services/projector/src/rebuild.ts). A run writes into shadow
-- tables in its own schema and is swapped in at the end; a run left 'running' by a crash is resumed.
CREATE TABLE replay_runs (
  id text PRIMARY KEY,
  projection text NOT NULL,
  schema_name text NOT NULL,
  group_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('running', 'done')),
  started_at timestamptz NOT NULL,
  finished_at timestamptz
);
CREATE UNIQUE INDEX replay_runs_one_running ON replay_runs (projection) WHERE status = 'running';

-- What migration 0005 did to each read-model table: the query role may read it, confined by row-level
-- security to the organization of its transaction. A rebuilt table gets the same before it is swapped in.
CREATE FUNCTION cas_protect_read_model(t regclass) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('GRANT SELECT ON %s TO cas_reader', t);
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', t);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', t);
  EXECUTE format('CREATE POLICY owner_all ON %s TO CURRENT_USER USING (true) WITH CHECK (true)', t);
  EXECUTE format('CREATE POLICY org_only ON %s FOR SELECT TO cas_reader USING (org_id = cas_current_org())', t);
END
$$;

-- Down Migration
DROP FUNCTION cas_protect_read_model(regclass);
DROP TABLE replay_runs;
