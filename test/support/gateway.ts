import { type AllConfig, loadConfig } from '@cas/config'
import { buildGatewayApp } from '@cas/service-gateway'
import { registerQueryRoutes } from '@cas/service-query'
import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { signUp } from './auth.ts'
import { catchUpChatbotReadModel } from './chatbot-read-model.ts'
import { createChatbot } from './chatbots.ts'
import { createTestDatabase, type TestDatabase } from './database.ts'
import { testKeyring } from './keyring.ts'

/**
 * The dashboard's HTTP surface on a test database, as the all-in-one serves it: the gateway's routes and
 * the query service's reads (through the row-level-security role). Driven with app.inject; `env`
 * overrides configuration. TEST_LOGS=1 prints the app's error logs (the 500s' causes) while debugging.
 *
 * The all-in-one also runs the projector, which keeps the chatbot read model the query's chatbot reads
 * wait for. Without `ownProjector`, every chatbot read first brings that read model up to date the projector's
 * way (catchUpChatbotReadModel); tests that run a projector of their own say so, so that their reads
 * wait for it as the query service's reads do.
 */
export async function buildTestGateway(
  db: TestDatabase,
  env: Record<string, string> = {},
  now?: () => Date,
  opts: { ownProjector?: boolean } = {},
): Promise<{ app: FastifyInstance; config: AllConfig }> {
  const config = loadConfig({ DATABASE_URL: db.url, ...env })
  const app = await buildGatewayApp({
    pool: db.pool,
    keyring: testKeyring,
    config,
    logger: process.env.TEST_LOGS ? pino({ level: 'error' }) : false,
    readiness: [],
    now,
    sessionRoutes: (scope) =>
      registerQueryRoutes(scope, {
        readerPool: db.readerPool,
        now: now ?? (() => new Date()),
        readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
      }),
  })
  if (!opts.ownProjector) {
    app.addHook('onRequest', async (request) => {
      if (request.method === 'GET' && request.url.startsWith('/api/v1/chatbots'))
        await catchUpChatbotReadModel(db.pool)
    })
  }
  await app.ready()
  return { app, config }
}

export interface TestGateways {
  /**
   * The file's database: created before its tests, dropped after them. Safe to destructure at the top of
   * the file; its members are only there once the tests run.
   */
  readonly db: TestDatabase
  /** A gateway app on `db` and the test clock, `env` over the defaults; closed after the test. */
  gateway(env?: Record<string, string>): Promise<FastifyInstance>
  /** Closes an app built some other way after the test too; returns it. */
  closeAfterTest<App extends FastifyInstance>(app: App): App
  /** The time the gateways see: the wall clock until setNow or advance fixes it. */
  now(): Date
  /** Fixes the time the gateways see (theirs from then on: it only moves with advance or setNow). */
  setNow(date: Date): void
  /** Moves the gateways' time forward by `ms` (from the wall clock's time when it was not fixed yet). */
  advance(ms: number): void
}

/**
 * The setup of a test file driving gateway apps: registers the hooks that create its database (beforeAll),
 * close the apps each test built (afterEach) and drop the database (afterAll). Call it once, at the top of
 * the file. `env` configures every gateway() unless a test overrides it.
 */
export function useTestGateways(opts: { env?: Record<string, string> } = {}): TestGateways {
  let database: TestDatabase | undefined
  const apps: FastifyInstance[] = []
  let clock: Date | undefined

  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()))
  })
  afterAll(async () => {
    await database?.drop()
  })

  const current = (): TestDatabase => {
    if (!database) throw new Error('the test database is only there inside tests and hooks')
    return database
  }
  const db: TestDatabase = {
    get url() {
      return current().url
    },
    get name() {
      return current().name
    },
    get pool() {
      return current().pool
    },
    get readerPool() {
      return current().readerPool
    },
    drop: () => current().drop(),
  }
  const now = () => clock ?? new Date()

  return {
    db,
    async gateway(env = {}) {
      const { app } = await buildTestGateway(db, { ...opts.env, ...env }, now)
      apps.push(app)
      return app
    },
    closeAfterTest(app) {
      apps.push(app)
      return app
    },
    now,
    setNow(date) {
      clock = date
    },
    advance(ms) {
      clock = new Date(now().getTime() + ms)
    },
  }
}

export interface SignedInGateway {
  /** The file's database (only there inside tests and hooks, like the two below). */
  readonly db: TestDatabase
  /** A gateway app on `db`, as buildTestGateway builds it. */
  readonly app: FastifyInstance
  /** The session cookie of a user signed up once for the file. */
  readonly cookie: string
}

/**
 * The common setup of a test file driving one gateway app as one signed-in user: registers the hooks that
 * create the database, the app and the user (beforeAll), and close and drop them (afterAll). Call it once,
 * at the top of the file; read its members inside tests.
 */
export function useSignedInGateway(): SignedInGateway {
  let state: { db: TestDatabase; app: FastifyInstance; cookie: string } | undefined
  beforeAll(async () => {
    const db = await createTestDatabase()
    const { app } = await buildTestGateway(db)
    state = { db, app, cookie: (await signUp(app)).cookie }
  })
  afterAll(async () => {
    await state?.app.close()
    await state?.db.drop()
  })
  const current = () => {
    if (!state) throw new Error('the signed-in gateway is only there inside tests and hooks')
    return state
  }
  return {
    get db() {
      return current().db
    },
    get app() {
      return current().app
    },
    get cookie() {
      return current().cookie
    },
  }
}

export interface CapturingGateway extends SignedInGateway {
  /** The API key of a chatbot the user created once for the file: what captures are sent with. */
  readonly apiKey: string
}

/**
 * The setup of a capture test file: useSignedInGateway's app and user, and a chatbot of theirs to capture
 * to. Call it once, at the top of the file; read its members inside tests.
 */
export function useCapturingGateway(): CapturingGateway {
  const signedIn = useSignedInGateway()
  let apiKey: string | undefined
  beforeAll(async () => {
    apiKey = (await createChatbot(signedIn.app, signedIn.cookie)).apiKey
  })
  return {
    get db() {
      return signedIn.db
    },
    get app() {
      return signedIn.app
    },
    get cookie() {
      return signedIn.cookie
    },
    get apiKey() {
      if (apiKey === undefined)
        throw new Error("the capturing gateway's chatbot is only there inside tests and hooks")
      return apiKey
    },
  }
}
