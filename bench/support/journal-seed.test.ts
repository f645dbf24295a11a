/**
 * The rebuild benchmark's seed writes events the services accept: sealed like the gateway's, valid by
 * the event schemas once opened, with the stream versions appendToStream keeps, and projected in full by
 * a rebuild.
 */
import { withTransaction } from '@cas/db'
import { appendToStream, journalTotalLag, readJournal } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import { openRecords } from '@cas/keyring'
import { rebuildReadModels } from '@cas/service-projector/rebuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../test/support/auth.ts'
import { createChatbot } from '../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../test/support/database.ts'
import { buildTestGateway } from '../../test/support/gateway.ts'
import { testKeyring } from '../../test/support/keyring.ts'
import { waitFor } from '../../test/support/wait.ts'
import { EVENTS_PER_CONVERSATION, seedJournal } from './journal-seed.ts'

const CONVERSATIONS = 25
/** The sign-up's organization.created and member-joined: in the journal, not projected. */
const ORGANIZATION_EVENTS = 2

describe('the benchmark journal seed', () => {
  let db: TestDatabase
  let total: number
  let orgId: string
  let chatbotId: string

  beforeAll(async () => {
    db = await createTestDatabase()
    const { app } = await buildTestGateway(db)
    const { cookie, organization } = await signUp(app)
    const { chatbot } = await createChatbot(app, cookie)
    await app.close()
    orgId = organization.id
    chatbotId = chatbot.id
    const seeded = await seedJournal(db.pool, {
      orgId,
      chatbotId,
      conversations: CONVERSATIONS,
      keyring: testKeyring,
    })
    expect(seeded).toBe(CONVERSATIONS * EVENTS_PER_CONVERSATION)
    total = seeded + 1 // and chatbot.created
    // The journal's read bound is the cluster-wide xmin, which other test files' transactions hold back.
    await waitFor(async () => (await journalTotalLag(db.pool, 'nobody')) === total + ORGANIZATION_EVENTS, {
      what: 'a readable seed',
    })
  })
  afterAll(async () => {
    await db?.drop()
  })

  it('writes only events valid by the event schemas, four per conversation, sealed like the gateway', async () => {
    const { records } = await readJournal(db.pool, { after: '0', limit: 1_000 })
    expect(records).toHaveLength(total + ORGANIZATION_EVENTS)
    const opened = await openRecords(db.pool, testKeyring, records)
    expect(opened.filter((o) => !o.ok).map((o) => !o.ok && `${o.reason}: ${o.detail}`)).toEqual([])
    const captured = records.find((r) => r.type === 'conversation.messages-captured')!
    expect(captured.version).toBe(2)
    expect(Object.keys(captured.payload as object).sort()).toEqual([
      'analysisRequested',
      'receivedAt',
      'sealed',
    ])
    expect(JSON.stringify(captured.payload)).not.toContain('jacket')
    const types = records
      .filter((r) => r.streamType !== 'chatbot' && r.streamType !== 'organization')
      .map((r) => r.type)
    expect(types.slice(0, EVENTS_PER_CONVERSATION)).toEqual([
      'conversation.started',
      'conversation.messages-captured',
      'analysis.messages-analyzed',
      'analysis.conversation-analyzed',
    ])
    // Each conversation's, the chatbot's and the organization's
    expect(new Set(records.map((r) => r.streamId)).size).toBe(CONVERSATIONS + 2)
  })

  it('is projected in full by a rebuild', async () => {
    const { applied } = await rebuildReadModels({
      pool: db.pool,
      keyring: testKeyring,
      eventLog: { kind: 'journal' },
      progressIntervalMs: 20,
    })
    expect(applied).toBe(total)
    const count = async (table: string) =>
      (await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n
    expect(await count('rm_conversations')).toBe(CONVERSATIONS)
    expect(await count('rm_messages')).toBe(CONVERSATIONS * 10)
  })

  it('leaves each stream at the version an append continues from', async () => {
    const { records } = await readJournal(db.pool, {
      after: '0',
      limit: 1_000,
      streamTypes: ['conversation'],
    })
    const streamId = records[0]!.streamId
    const appended = await withTransaction(db.pool, (client) =>
      appendToStream(client, {
        streamType: 'conversation',
        streamId,
        orgId,
        chatbotId,
        expectedVersion: 2,
        events: [newEvent('conversation.erased', { reason: 'retention' })],
      }),
    )
    expect(appended.streamVersion).toBe(3)
  })
})
