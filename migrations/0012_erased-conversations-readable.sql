-- Up Migration

-- The query service answers 404 at once for an erased conversation instead of waiting for a projection
-- that will never come: it reads the erasure tombstones, confined to its organization like every read
-- model (conversation ids only, no content).
SELECT cas_protect_read_model('public.rm_erased_conversations'::regclass);

-- Down Migration
DROP POLICY org_only ON rm_erased_conversations;
DROP POLICY owner_all ON rm_erased_conversations;
ALTER TABLE rm_erased_conversations NO FORCE ROW LEVEL SECURITY;
ALTER TABLE rm_erased_conversations DISABLE ROW LEVEL SECURITY;
REVOKE SELECT ON rm_erased_conversations FROM cas_reader;
