// The lists derived from the registry (registry.ts) against the registry and the migrated database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import {
  CHATBOT_ROW_TABLES,
  CHATBOT_TABLES,
  CONVERSATION_ROW_TABLES,
  CONVERSATION_TABLES,
  checkBarrierHooks,
  PROTECTED_TABLES,
  READ_MODEL_TABLES,
  READ_MODELS,
  type ReadModel,
  type ReadModelTable,
} from './registry.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await db?.drop()
})

const tables = (READ_MODELS as readonly ReadModel[]).flatMap((m) => m.tables)
const named = (keep: (t: ReadModelTable) => boolean) => tables.filter(keep).map((t) => t.name)

describe('the projection registry', () => {
  it('derives each list of tables from what the tables declare', () => {
    expect(READ_MODEL_TABLES).toEqual(tables.map((t) => t.name))
    expect(new Set(READ_MODEL_TABLES).size).toBe(READ_MODEL_TABLES.length)
    expect(PROTECTED_TABLES).toEqual(named((t) => t.rowLevelSecurity))
    expect(CHATBOT_TABLES).toEqual(named((t) => t.onChatbotDeleted === 'rows-deleted'))
    expect(CHATBOT_ROW_TABLES).toEqual(['rm_chatbots'])
    expect(CONVERSATION_TABLES).toEqual(named((t) => t.onErasure === 'rows-deleted'))
    expect(CONVERSATION_ROW_TABLES).toEqual(['rm_conversations'])
  })

  it('has a hook for every table whose deletion or erasure is more than a delete, and no other', () => {
    expect(checkBarrierHooks(READ_MODELS as readonly ReadModel[])).toEqual([])
    const rollups = (READ_MODELS as readonly ReadModel[]).find((m) => m.name === 'rollups')!
    expect(checkBarrierHooks([{ ...rollups, onErasure: undefined }])).toEqual([
      'rollups: rm_hourly_stats, rm_hourly_topics, rm_daily_topics, rm_hourly_languages, rm_hourly_activity, rm_chatbot_user_hours, rm_org_hourly_stats, rm_org_user_hours, rm_org_end_users taken out on erasure, but no takeOut',
    ])
    const messages = (READ_MODELS as readonly ReadModel[]).find((m) => m.name === 'messages')!
    expect(checkBarrierHooks([{ ...messages, onChatbotDeleted: { remember: async () => {} } }])).toEqual([
      'messages: a remember on chatbot deletion, but no tombstone table',
    ])
  })

  it('names every read-model table of the database, and the ones under row-level security', async () => {
    const { rows } = await db.pool.query<{ name: string; rls: boolean }>(
      `SELECT c.relname AS name, c.relrowsecurity AS rls FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname LIKE 'rm\\_%'`,
    )
    expect(rows.map((r) => r.name).sort()).toEqual([...READ_MODEL_TABLES].sort())
    expect(
      rows
        .filter((r) => r.rls)
        .map((r) => r.name)
        .sort(),
    ).toEqual([...PROTECTED_TABLES].sort())
  })

  it('deletes by columns the tables have', async () => {
    const columnsOf = async (table: string) =>
      (
        await db.pool.query<{ column_name: string }>(
          'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1',
          [table],
        )
      ).rows.map((r) => r.column_name)
    for (const table of CHATBOT_TABLES) expect(await columnsOf(table), table).toContain('chatbot_id')
    for (const table of CONVERSATION_TABLES)
      expect(await columnsOf(table), table).toContain('conversation_id')
    for (const table of [...CHATBOT_ROW_TABLES, ...CONVERSATION_ROW_TABLES])
      expect(await columnsOf(table), table).toContain('id')
  })
})
