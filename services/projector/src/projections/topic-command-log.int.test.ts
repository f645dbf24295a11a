/**
 * rm_topic_command_log is written from two streams: a topic command's request (the chatbot's) and its
 * outcome (the analysis', analysis.topic-command-handled), consumed apart. Whichever is applied first, and
 * however often, the row ends the same: what was asked, by whom, and the outcome.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { TopicCommandLogChanges, type TopicCommandLogEvent } from './topic-command-log.ts'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await db?.drop()
})

const orgId = randomUUID()

function commandPair(chatbotId: string) {
  const commandId = randomUUID()
  const actorId = randomUUID()
  const request = {
    id: commandId,
    type: 'chatbot.topic-merge-requested',
    version: 1,
    orgId,
    chatbotId,
    streamId: chatbotId,
    streamVersion: 7,
    occurredAt: '2026-11-29T10:00:00.000Z',
    metadata: { actorId },
    payload: { topicId: 't-refunds', into: 't-billing' },
  } as unknown as TopicCommandLogEvent
  const outcome = {
    id: randomUUID(),
    type: 'analysis.topic-command-handled',
    version: 1,
    orgId,
    chatbotId,
    streamId: chatbotId,
    streamVersion: 3,
    occurredAt: '2026-11-29T10:00:02.000Z',
    metadata: { causationId: commandId },
    payload: {
      commandEventId: commandId,
      commandStreamVersion: 7,
      commandType: 'chatbot.topic-merge-requested',
      outcome: 'refused',
      reason: 'gone',
    },
  } as unknown as TopicCommandLogEvent
  const expected = {
    command_id: commandId,
    org_id: orgId,
    chatbot_id: chatbotId,
    command_stream_version: 7,
    type: 'merge',
    topic_id: 't-refunds',
    into_topic_id: 't-billing',
    label: null,
    previous_label: null,
    actor_id: actorId,
    requested_at: new Date('2026-11-29T10:00:00.000Z'),
    status: 'refused',
    reason: 'gone',
    moved: null,
    handled_at: new Date('2026-11-29T10:00:02.000Z'),
  }
  return { request, outcome, expected }
}

/** Applies each group of events as one batch, in order. */
async function apply(...batches: TopicCommandLogEvent[][]) {
  for (const batch of batches) {
    const changes = new TopicCommandLogChanges()
    for (const e of batch) changes.add(e)
    const client = await db.pool.connect()
    try {
      await changes.flush(client)
    } finally {
      client.release()
    }
  }
}

const rows = async (chatbotId: string) =>
  (await db.pool.query('SELECT * FROM rm_topic_command_log WHERE chatbot_id = $1', [chatbotId])).rows

describe('rm_topic_command_log (topic-command-log.ts)', () => {
  it('holds a command pending from its request alone', async () => {
    const chatbotId = randomUUID()
    const { request, expected } = commandPair(chatbotId)
    await apply([request])
    expect(await rows(chatbotId)).toEqual([
      { ...expected, status: 'pending', reason: null, handled_at: null },
    ])
  })

  it('ends the same whether the request or the outcome is applied first, or in one batch', async () => {
    for (const order of ['request first', 'outcome first', 'one batch'] as const) {
      const chatbotId = randomUUID()
      const { request, outcome, expected } = commandPair(chatbotId)
      if (order === 'request first') await apply([request], [outcome])
      if (order === 'outcome first') await apply([outcome], [request])
      if (order === 'one batch') await apply([request, outcome])
      expect(await rows(chatbotId), order).toEqual([expected])
    }
  })

  it('keeps an outcome applied first without its request until the request comes', async () => {
    const chatbotId = randomUUID()
    const { outcome, expected } = commandPair(chatbotId)
    await apply([outcome])
    expect(await rows(chatbotId)).toEqual([
      { ...expected, topic_id: null, into_topic_id: null, actor_id: null, requested_at: null },
    ])
  })

  it('changes nothing when either is applied again (redelivery)', async () => {
    const chatbotId = randomUUID()
    const { request, outcome, expected } = commandPair(chatbotId)
    await apply([request], [outcome], [request], [outcome, request])
    expect(await rows(chatbotId)).toEqual([expected])
  })

  it("keeps a rename's new label and the label the topic had then (v2's previousLabel)", async () => {
    const chatbotId = randomUUID()
    const { request, expected } = commandPair(chatbotId)
    const rename = {
      ...request,
      type: 'chatbot.topic-rename-requested',
      version: 2,
      payload: { topicId: 't-refunds', label: 'Money back', previousLabel: 'refund, money back' },
    } as unknown as TopicCommandLogEvent
    await apply([rename], [rename])
    expect(await rows(chatbotId)).toEqual([
      {
        ...expected,
        type: 'rename',
        into_topic_id: null,
        label: 'Money back',
        previous_label: 'refund, money back',
        status: 'pending',
        reason: null,
        handled_at: null,
      },
    ])
  })
})
