/**
 * Capture → projection → query end to end, in both modes: the journal read directly (embedded default)
 * and Kafka fed by the relay. A capture that returned is visible to the next read of its conversation
 * (DESIGN.md guarantee 5), 100 times in a row.
 */
import { type EventLogBackend, Relay } from '@cas/eventlog'
import { createProjector, type Projector } from '@cas/service-projector'
import type { FastifyInstance } from 'fastify'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from './support/database.ts'
import { buildTestGateway } from './support/gateway.ts'
import { createTestTopics, kafkaBrokers, uniqueGroupId } from './support/kafka.ts'

const modes = [
  { name: 'journal', available: true },
  { name: 'kafka', available: kafkaBrokers() !== null },
] as const

for (const mode of modes) {
  describe.skipIf(!mode.available)(`read-your-writes, ${mode.name} mode`, () => {
    let db: TestDatabase
    let app: FastifyInstance
    let projector: Projector
    let relay: Relay | undefined

    beforeEach(async () => {
      db = await createTestDatabase()
      // A wider bound than the default 2 s: test files share one Postgres cluster, and a journal reader waits
      // for every older transaction in the cluster to end, so other files' slow transactions (held open on
      // purpose) can delay delivery here. What is tested is that the read waits for the projection.
      ;({ app } = await buildTestGateway(db, { READ_YOUR_WRITES_TIMEOUT_MS: '5000' }))
      let eventLog: EventLogBackend = { kind: 'journal', pollIntervalMs: 5 }
      if (mode.name === 'kafka') {
        const topics = await createTestTopics(4)
        relay = new Relay({
          pool: db.pool,
          kafka: topics.kafka,
          topicPrefix: topics.topicPrefix,
          pollIntervalMs: 5,
        })
        await relay.start()
        eventLog = {
          kind: 'kafka',
          kafka: topics.kafka,
          topicPrefix: topics.topicPrefix,
          sessionTimeoutMs: 6_000,
        }
      }
      // Its own group: test files share the Kafka cluster, and a shared group would rebalance across them.
      projector = createProjector({
        pool: db.pool,
        eventLog,
        logger: false,
        groupId: uniqueGroupId('projector'),
      })
      await projector.consumer.start()
    })
    afterEach(async () => {
      await projector.consumer.stop()
      await relay?.stop()
      await app.close()
      await db.drop()
    })

    it('shows every capture to the very next read of its conversation, 100 times in a row', async () => {
      const { cookie } = await signUp(app)
      const { apiKey } = await createChatbot(app, cookie)
      for (let i = 0; i < 100; i++) {
        // Alternate new conversations and appends to an existing one.
        const conversationId = `conversation-${Math.floor(i / 2)}`
        const captured = await postCapture(app, apiKey, {
          conversationId,
          messages: [{ id: `m-${i}`, role: i % 2 ? 'assistant' : 'user', content: `message ${i}` }],
          custom: { step: i },
        })
        expect(captured.statusCode).toBe(200)
        const res = await app.inject({
          method: 'GET',
          url: `/api/v1/conversations/${captured.json().conversationId}`,
          headers: { cookie },
        })
        expect(res.statusCode, `read ${i}`).toBe(200)
        const { conversation } = res.json()
        expect(conversation.messages.map((m: { id: string }) => m.id).at(-1), `read ${i}`).toBe(`m-${i}`)
        expect(conversation.custom, `read ${i}`).toEqual({ step: i })
      }
      const list = await app.inject({
        method: 'GET',
        url: '/api/v1/conversations?limit=100',
        headers: { cookie },
      })
      expect(list.json().conversations).toHaveLength(50)
    })
  })
}
