import { randomBytes } from 'node:crypto'
import { loadConfig } from '@cas/config'
import { Keyring, parseMasterKey } from '@cas/keyring'
import { buildGatewayApp } from '@cas/service-gateway'
import { registerQueryRoutes } from '@cas/service-query'
import pg from 'pg'

/**
 * The OpenAPI document that `npm start` serves at GET /api/v1/openapi.json (the gateway's routes and the
 * query service's reads on one server), built without a database: the routes are registered on a pool
 * that is never connected, and the app is closed before anything could use it. `npm run openapi:export`
 * writes it to openapi/openapi.json; test/openapi-export.test.ts fails while that file differs from it.
 */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const databaseUrl = 'postgres://openapi@127.0.0.1:1/openapi'
  // A session secret of its own: otherwise the cookie session would read one from the database.
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    SESSION_SECRET: randomBytes(48).toString('base64url'),
  })
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 })
  const now = () => new Date()
  const app = await buildGatewayApp({
    pool,
    keyring: new Keyring(parseMasterKey(randomBytes(32).toString('base64'))),
    config,
    logger: false,
    readiness: [],
    now,
    sessionRoutes: (scope) =>
      registerQueryRoutes(scope, { readerPool: pool, now, readYourWritesTimeoutMs: 1_000 }),
  })
  try {
    await app.ready()
    return JSON.parse(JSON.stringify(app.swagger())) as Record<string, unknown>
  } finally {
    await app.close()
    await pool.end()
  }
}

/** The document as the checked-in file holds it: two-space JSON and a final newline. */
export function openApiFileText(doc: Record<string, unknown>): string {
  return `${JSON.stringify(doc, null, 2)}\n`
}
