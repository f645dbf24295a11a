/** Where the operator reads which rights the DATABASE_URL role needs. */
const SEE = 'docs/operations.md, "An external Postgres"'

/**
 * Postgres's `permission denied` (42501) to the role of DATABASE_URL, said as what to grant: a managed
 * Postgres's application role is rarely a superuser, and the bare error names no remedy. Anything else is
 * returned as it is.
 */
export function explainPermissionDenied(err: unknown, doing: 'migrations' | 'reader login'): unknown {
  if ((err as { code?: string } | null)?.code !== '42501') return err
  const message = (err as Error).message
  const remedy =
    doing === 'migrations'
      ? 'the DATABASE_URL role must own the database and, unless the role cas_reader exists already, ' +
        'have CREATEROLE (or an administrator runs "CREATE ROLE cas_reader NOLOGIN" once)'
      : "the DATABASE_URL role needs CREATEROLE to create the query service's login role cas_query; " +
        'without it, set QUERY_DATABASE_URL to a login role an administrator made a member of cas_reader'
  // The code kept, not the cause: the log's error serializer would repeat the cause's message.
  return Object.assign(
    new Error(
      `${doing === 'migrations' ? 'migrating' : 'creating the reader login'}: ${message}: ${remedy} (${SEE})`,
    ),
    { code: '42501' },
  )
}
