/**
 * The overview's language share reads an hourly rollup, not the range's messages: an organization of two
 * chatbots with 40,000 end-user messages (and as many replies) over 30 days, beside their year before
 * and another organization's chatbots in the rollup. Read from rm_messages
 * (lang1), each overview walked every end-user message of the range (a sequential scan of the whole
 * table at bench:reads' 50,000 conversations, lang2): the one part of the overview that grew with them.
 */
import { randomUUID } from 'node:crypto'
import { withOrgScope } from '@cas/db'
import { UNDETERMINED_LANGUAGE } from '@cas/events'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { LANGUAGES_FROM_MESSAGES } from '../../../test/support/derived-rollups.ts'
import { blocksRead, rowsRead } from '../../../test/support/plan-rows.ts'
import { LANGUAGES_SQL, languageFigures, readLanguages } from './repositories/languages.ts'

const ORG = randomUUID()
const CHATBOTS = [randomUUID(), randomUUID()]
const FROM = new Date('2026-10-22T00:00:00Z')
const TO = new Date('2026-11-21T00:00:00Z')
const MESSAGES = 40_000

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
  await db.pool.query(
    `INSERT INTO rm_chatbots (id, org_id, name, api_key_prefix, settings, created_at, stream_version)
     SELECT id, $1, 'bot', 'k', '{}', '2026-10-01', 1 FROM unnest($2::uuid[]) id`,
    [ORG, CHATBOTS],
  )
  // End-user message n and its reply, spread evenly over the 30 days: "en" 8 in 10, "und" 1, "es" 1.
  await db.pool.query(
    `INSERT INTO rm_messages (conversation_id, message_id, org_id, chatbot_id, role, content, sent_at, arrival,
                              language)
     SELECT md5(n::text)::uuid, r.role || '-' || n, $1, ($2::uuid[])[1 + n % 2], r.role, 'text ' || n,
            $3::timestamptz + (n + 0.5) * ($4::timestamptz - $3::timestamptz) / $5 + r.offs * interval '1 second',
            2 * n + r.offs,
            CASE WHEN r.role = 'user' THEN (ARRAY['en', 'en', 'en', 'en', 'en', 'en', 'en', 'en', '${UNDETERMINED_LANGUAGE}', 'es'])[1 + (n / 2) % 10] END
       FROM generate_series(0, $5 - 1) n CROSS JOIN (VALUES ('user', 0), ('assistant', 1)) r(role, offs)`,
    [ORG, CHATBOTS, FROM, TO, MESSAGES],
  )
  // The rollup as the projector leaves it (the same statement as migration 0061's).
  await db.pool.query(
    `INSERT INTO rm_hourly_languages (org_id, chatbot_id, hour, language, messages)
     SELECT org_id, chatbot_id, date_trunc('hour', sent_at, 'UTC'), language, count(*)
       FROM rm_messages
      WHERE role = 'user' AND sent_at IS NOT NULL AND language IS NOT NULL AND language <> '${UNDETERMINED_LANGUAGE}'
      GROUP BY 1, 2, 3, 4`,
  )
  // Beside them, the rollup's rows a real table holds: these chatbots' year before the range, and another
  // organization's chatbots in the range (their messages are not needed: only the rollup is read).
  await db.pool.query(
    `INSERT INTO rm_hourly_languages (org_id, chatbot_id, hour, language, messages)
     SELECT $1, c, $3::timestamptz - make_interval(hours => h), l, 3
       FROM unnest($2::uuid[]) c, generate_series(1, 335 * 24) h, unnest(ARRAY['en', 'es']) l`,
    [ORG, CHATBOTS, FROM],
  )
  await db.pool.query(
    `INSERT INTO rm_hourly_languages (org_id, chatbot_id, hour, language, messages)
     SELECT $1, gen_random_uuid(), $2::timestamptz + make_interval(hours => h), l, 3
       FROM generate_series(1, 10) c, generate_series(0, 30 * 24 - 1) h, unnest(ARRAY['en', 'es']) l`,
    [randomUUID(), FROM],
  )
  await db.pool.query('ANALYZE rm_chatbots, rm_messages, rm_hourly_languages')
})
afterAll(() => db.drop())

describe("the overview's languages over 30 days of 40,000 end-user messages", () => {
  for (const chatbotId of [null, CHATBOTS[0]!]) {
    it(`${chatbotId === null ? "of the organization's chatbots" : 'of one chatbot'}: reads the rollup's hours, not the messages`, async () => {
      const scope = { orgId: ORG, from: FROM, to: TO, ...(chatbotId ? { chatbotId } : {}) }
      const params = [ORG, FROM, TO, chatbotId]
      // The answer is the messages' (36,000 detected, 4,000 of them es; half of each for one chatbot)
      const figures = await withOrgScope(db.readerPool, ORG, (client) => readLanguages(client, scope))
      const { rows } = await db.pool.query<{ language: string; messages: number }>(
        LANGUAGES_FROM_MESSAGES,
        params,
      )
      expect(figures).toEqual(languageFigures(rows))
      expect(figures.detected).toBe(chatbotId ? 18_000 : 36_000)

      // Then: no message is read; of the rollup, at most a row per chatbot, hour and language (720 hours)
      expect(await rowsRead(db.pool, 'rm_messages', LANGUAGES_SQL, params)).toBe(0)
      const hourRows = await rowsRead(db.pool, 'rm_hourly_languages', LANGUAGES_SQL, params)
      expect(hourRows).toBeLessThanOrEqual(720 * 2 * (chatbotId ? 1 : 2))
      // And a small part of the blocks the messages' read took (before: every end-user message in range)
      expect(await rowsRead(db.pool, 'rm_messages', LANGUAGES_FROM_MESSAGES, params)).toBeGreaterThanOrEqual(
        chatbotId ? 20_000 : 40_000,
      )
      const before = await blocksRead(db.pool, LANGUAGES_FROM_MESSAGES, params)
      const after = await blocksRead(db.pool, LANGUAGES_SQL, params)
      expect(after.read * 5).toBeLessThan(before.read)
    })
  }
})
