import pg from 'pg'

/**
 * PostgreSQL 14 and older grant PUBLIC CREATE on schema public, which lets the read-only `cas_query` login
 * create objects there. Migration 0060 revokes it when the migrating role may; when it may not (the schema
 * belongs to another role, e.g. a managed 14's superuser), this names the statement its owner must run, for
 * the service's warning at start. Undefined when PUBLIC cannot create there, or the database has no public
 * schema.
 */
export async function publicSchemaOpenToAll(
  databaseUrl: string,
): Promise<{ readonly owner: string; readonly statement: string } | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl })
  client.on('error', () => {})
  await client.connect()
  try {
    const { rows } = await client.query<{ owner: string; open: boolean }>(
      `SELECT pg_get_userbyid(nspowner) AS owner, has_schema_privilege('public', oid, 'CREATE') AS open
         FROM pg_namespace WHERE nspname = 'public'`,
    )
    const row = rows[0]
    if (!row?.open) return undefined
    return { owner: row.owner, statement: 'REVOKE CREATE ON SCHEMA public FROM PUBLIC;' }
  } finally {
    await client.end()
  }
}
