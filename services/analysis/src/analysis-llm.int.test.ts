import { loadConfig } from '@cas/config'
import { EMBEDDED_EVENT_LOG } from '@cas/eventlog'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../../test/support/auth.ts'
import { createChatbot, postCapture } from '../../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'
import { journalEvents } from '../../../test/support/journal.ts'
import { testKeyring } from '../../../test/support/keyring.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { type FakeChatServer, startFakeChatServer } from '../test/fake-chat-server.ts'
import { createAnalysisService } from './app.ts'
import { createAnalyzer } from './providers/index.ts'

let db: TestDatabase
let app: FastifyInstance
let server: FakeChatServer

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db))
  server = await startFakeChatServer()
})
afterAll(async () => {
  await server.close()
  await app.close()
  await db.drop()
})

describe('analysis with ANALYSIS_PROVIDER=llm', () => {
  it('analyzes captures through the configured OpenAI-compatible endpoint and records that model', async () => {
    const config = loadConfig({
      DATABASE_URL: db.url,
      ANALYSIS_PROVIDER: 'llm',
      LLM_BASE_URL: server.baseUrl,
      LLM_API_KEY: 'sk-test-key',
      LLM_MODEL: 'test-model',
    })
    const analyzer = await createAnalyzer(config)
    expect(analyzer.info.name).toBe('llm:test-model')
    const service = createAnalysisService({
      pool: db.pool,
      keyring: testKeyring,
      eventLog: { ...EMBEDDED_EVENT_LOG, pollIntervalMs: 5 },
      analyzer,
      logger: false,
    })
    await service.start()
    try {
      const { cookie } = await signUp(app)
      const { apiKey } = await createChatbot(app, cookie)
      // The first call fails with a 500: the job is retried, not lost.
      server.script({ status: 500 })
      const res = await postCapture(app, apiKey, {
        conversationId: 'llm',
        messages: [
          { id: 'q', role: 'user', content: 'Where is my parcel?' },
          { id: 'a', role: 'assistant', content: 'It ships tomorrow.' },
        ],
      })
      const conversationId = res.json().conversationId
      const events = await waitFor(async () => {
        const found = await journalEvents(db.pool, 'analysis', conversationId)
        return found.length >= 2 && found
      })
      expect(events.map((e) => e.type)).toEqual([
        'analysis.messages-analyzed',
        'analysis.conversation-analyzed',
      ])
      const [analyzed] = events as [(typeof events)[0]]
      expect(analyzed.payload.analyzer).toEqual(analyzer.info)
      expect((analyzed.payload.results as { messageId: string }[]).map((r) => r.messageId)).toEqual([
        'q',
        'a',
      ])
      expect(server.requests.length).toBeGreaterThanOrEqual(2)
      expect(server.requests.every((r) => r.authorization === 'Bearer sk-test-key')).toBe(true)
    } finally {
      await service.stop()
    }
  })

  it('refuses to start with ANALYSIS_PROVIDER=llm but no endpoint, naming what is missing', () => {
    expect(() => loadConfig({ ANALYSIS_PROVIDER: 'llm' })).toThrow(
      /LLM_BASE_URL.*\n.*LLM_API_KEY.*\n.*LLM_MODEL/s,
    )
  })
})
