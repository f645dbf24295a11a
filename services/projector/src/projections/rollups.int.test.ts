import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { RollupChanges } from './rollups.ts'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await db?.drop()
})

/** `client`, with the statements sent through it counted. */
function counting(client: pg.PoolClient): { client: pg.PoolClient; sent: () => number } {
  let sent = 0
  const counted = new Proxy(client, {
    get(target, property) {
      if (property === 'query')
        return (...args: unknown[]) => {
          sent++
          return (target.query as (...a: unknown[]) => unknown)(...args)
        }
      const value = Reflect.get(target, property)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return { client: counted, sent: () => sent }
}

const ROLLUPS = [
  'rm_hourly_stats',
  'rm_org_hourly_stats',
  'rm_hourly_topics',
  'rm_daily_topics',
  'rm_hourly_languages',
] as const

async function rollupRows(orgId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const table of ROLLUPS) {
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table} WHERE org_id = $1`,
      [orgId],
    )
    counts[table] = rows[0]!.n
  }
  return counts
}

describe('RollupChanges.flush', () => {
  // lang3 wrote the languages with their own statement and each table's emptied rows with one more:
  // a batch that took counts back from all five tables sent eight statements.
  it("writes the stats, the results' counts and the emptied rows in three statements", async () => {
    const [orgId, chatbotId] = [randomUUID(), randomUUID()]
    const [ten, eleven] = ['2026-11-10T10:00:00.000Z', '2026-11-10T11:00:00.000Z']
    const positive = { score: 0.5, label: 'positive' } as const
    // Given an end user's message in each of two hours, with its result (a topic, a language) counted.
    const given = new RollupChanges()
    for (const hour of [ten, eleven]) {
      given.addMessage(orgId, chatbotId, hour, 'user')
      given.addAnalysis(orgId, chatbotId, hour, 'user', positive, ['refunds'], 1)
      given.addLanguage(orgId, chatbotId, hour, 'es', 1)
    }
    await withTransaction(db.pool, (client) => given.flush(client))
    expect(await rollupRows(orgId)).toEqual({
      rm_hourly_stats: 2,
      rm_org_hourly_stats: 2,
      rm_hourly_topics: 2,
      rm_daily_topics: 1,
      rm_hourly_languages: 2,
    })

    // When a batch takes the ten o'clock message back (as an erasure does) and re-reads the eleven
    // o'clock one as another topic and language.
    const batch = new RollupChanges()
    batch.addMessage(orgId, chatbotId, ten, 'user', -1)
    batch.addAnalysis(orgId, chatbotId, ten, 'user', positive, ['refunds'], -1)
    batch.addLanguage(orgId, chatbotId, ten, 'es', -1)
    batch.addAnalysis(orgId, chatbotId, eleven, 'user', positive, ['refunds'], -1)
    batch.addAnalysis(orgId, chatbotId, eleven, 'user', positive, ['billing'], 1)
    batch.addLanguage(orgId, chatbotId, eleven, 'es', -1)
    batch.addLanguage(orgId, chatbotId, eleven, 'fr', 1)
    const sent = await withTransaction(db.pool, async (client) => {
      const counted = counting(client)
      await batch.flush(counted.client)
      return counted.sent()
    })

    // Then three statements: the hourly stats, the results' counts, the rows taken to zero, all deleted.
    expect(sent).toBe(3)
    const hours = async (table: string, column: string) =>
      (
        await db.pool.query<{ key: string }>(
          `SELECT to_char(hour AT TIME ZONE 'UTC', 'HH24') || ' ' || ${column} AS key FROM ${table}
            WHERE chatbot_id = $1 ORDER BY 1`,
          [chatbotId],
        )
      ).rows.map((r) => r.key)
    expect(await hours('rm_hourly_stats', 'messages')).toEqual(['11 1'])
    expect(await hours('rm_hourly_topics', 'topic')).toEqual(['11 billing'])
    expect(await hours('rm_hourly_languages', 'language')).toEqual(['11 fr'])
    expect(await rollupRows(orgId)).toEqual({
      rm_hourly_stats: 1,
      rm_org_hourly_stats: 1,
      rm_hourly_topics: 1,
      rm_daily_topics: 1,
      rm_hourly_languages: 1,
    })
  })
})
