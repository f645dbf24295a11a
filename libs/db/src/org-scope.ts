import type pg from 'pg'

/**
 * Runs `fn` in a read-only transaction scoped to one organization: row-level security on the read models
 * shows the query service's role only rows whose org_id is the one set here, and the setting ends with
 * the transaction, so a pooled connection carries nothing over to the next organization.
 */
export async function withOrgScope<T>(
  pool: pg.Pool,
  orgId: string,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect()
  let broken: Error | undefined
  try {
    await client.query('BEGIN READ ONLY')
    await client.query("SELECT set_config('cas.org_id', $1, true)", [orgId])
    const result = await fn(client)
    await client.query('COMMIT')
    return result
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: Error) => {
      broken = rollbackErr
    })
    throw err
  } finally {
    client.release(broken)
  }
}
