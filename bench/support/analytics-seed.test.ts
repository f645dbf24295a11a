/**
 * The analytics benchmark's seed writes what the projector would: every derived table equals its
 * recomputation from the activity rows and hourly rollups, and the overview's counts equal the distinct
 * counts over the activity rows, for ranges ending now and ranges in the past.
 */
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../test/support/auth.ts'
import { createChatbot } from '../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../test/support/database.ts'
import { derivedRollupDifferences } from '../../test/support/derived-rollups.ts'
import { buildTestGateway } from '../../test/support/gateway.ts'
import { seedReadModels } from './analytics-seed.ts'

const NOW = new Date('2026-11-21T12:00:00Z')

describe('the benchmark analytics seed', () => {
  let db: TestDatabase
  let app: FastifyInstance
  let cookie: string
  let orgId: string
  const chatbotIds: string[] = []

  beforeAll(async () => {
    db = await createTestDatabase()
    ;({ app } = await buildTestGateway(db, {}, () => NOW))
    const account = await signUp(app)
    cookie = account.cookie
    orgId = account.organization.id
    for (const name of ['one', 'two'])
      chatbotIds.push((await createChatbot(app, cookie, { name })).chatbot.id)
    // Enough messages for every hour of the year to have some, on each chatbot.
    await seedReadModels(db.pool, { orgId, chatbotIds, messages: 60_000, now: NOW })
  })
  afterAll(async () => {
    await app?.close()
    await db?.drop()
  })

  it('derives what the projector derives', async () => {
    expect(await derivedRollupDifferences(db.pool)).toEqual({})
  })

  it('gives the overview the distinct counts of the activity rows', async () => {
    for (const chatbotId of [undefined, chatbotIds[0]]) {
      for (const range of ['days=365', 'days=30', 'from=2026-09-01T05:00:00Z&to=2026-10-01T17:00:00Z']) {
        const query = `${range}${chatbotId ? `&chatbotId=${chatbotId}` : ''}`
        const res = await app.inject({
          method: 'GET',
          url: `/api/v1/analytics/overview?${query}`,
          headers: { cookie },
        })
        expect(res.statusCode, res.body).toBe(200)
        const { range: resolved, totalConversations, uniqueUsers } = res.json()
        const { rows } = await db.pool.query(
          `SELECT count(DISTINCT conversation_id)::int AS "totalConversations",
                  count(DISTINCT end_user_id)::int AS "uniqueUsers"
             FROM rm_hourly_activity WHERE org_id = $1 AND hour >= $2 AND hour < $3 AND ($4::uuid IS NULL OR chatbot_id = $4)`,
          [orgId, resolved.from, resolved.to, chatbotId ?? null],
        )
        expect({ totalConversations, uniqueUsers }, query).toEqual(rows[0])
      }
    }
    // Returning users: some of those in the past range come back after it, so that range also counted
    // chains spanning its end.
    const { rows } = await db.pool.query(
      `SELECT count(*)::int AS n FROM rm_org_user_hours
        WHERE org_id = $1 AND hour >= '2026-09-01T05:00:00Z' AND hour < '2026-10-01T17:00:00Z'
          AND next_hour >= '2026-10-01T17:00:00Z'`,
      [orgId],
    )
    expect(rows[0].n).toBeGreaterThan(0)
  })
})
