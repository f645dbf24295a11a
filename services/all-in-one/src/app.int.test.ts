import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { loadConfig } from '@cas/config'
import { withTransaction } from '@cas/db'
import { appendToStream, topicFor } from '@cas/eventlog'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { signUp } from '../../../test/support/auth.ts'
import { createChatbot } from '../../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { createTestTopics, kafkaBrokers, uniqueGroupId } from '../../../test/support/kafka.ts'
import { TEST_MASTER_KEY } from '../../../test/support/keyring.ts'
import { samples } from '../../../test/support/metrics.ts'
import { modelConfigEnv } from '../../../test/support/model.ts'
import { captureRequests, INSURER } from '../../../test/support/topic-requests.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { type AllInOne, startAllInOne } from './app.ts'

const silent = pino({ level: 'silent' })
const ORG = '00000000-0000-4000-8000-00000000000a'
const CHATBOT = '00000000-0000-4000-8000-00000000000b'

describe('all-in-one service', () => {
  let db: TestDatabase
  let service: AllInOne | undefined
  beforeEach(async () => {
    db = await createTestDatabase()
  })
  afterEach(async () => {
    await service?.close()
    service = undefined
    await db.drop()
  })

  /** The all-in-one on this test's database and the test model; `env` adds to or overrides that. */
  const allInOne = (env: Record<string, string> = {}) =>
    startAllInOne(
      loadConfig({
        DATABASE_URL: db.url,
        PORT: '0',
        ENCRYPTION_MASTER_KEY: TEST_MASTER_KEY,
        ...modelConfigEnv(),
        ...env,
      }),
      false,
      silent,
    )

  it('serves /healthz and /readyz on the journal backend when KAFKA_BROKERS is unset', async () => {
    service = await allInOne()
    expect(service.infra.eventLog.kind).toBe('journal')
    expect(service.relay).toBeUndefined()
    const health = await service.app.inject('/healthz')
    expect(health.statusCode).toBe(200)
    const ready = await service.app.inject('/readyz')
    expect(ready.json()).toMatchObject({ ok: true, checks: { database: 'ok', analyzer: 'ok' } })
    // Which analyzer analyses: the language model (loaded from the test folder), here.
    expect(['loading', 'ready']).toContain(ready.json().details.analyzer.state)
    expect(ready.json().details.analyzer.name).toBe('local-embedding')
    // How current the read models and the analysis are: described, not checked (lag is not unreadiness).
    expect(Object.keys(ready.json().checks).sort()).toEqual(['analyzer', 'database'])
    const current = await waitFor(
      async () => {
        const { details } = (await service!.app.inject('/readyz')).json()
        return details.projection.state === 'up-to-date' && details.analysis.state === 'up-to-date' && details
      },
      { what: 'both stages reported up to date' },
    )
    expect(current.projection).toMatchObject({ behindSeconds: 0, events: 0 })
    expect(current.analysis).toMatchObject({ behindSeconds: 0, events: 0, jobs: 0 })
  })

  it('answers 404 in the API error shape for an unknown route', async () => {
    service = await allInOne()
    const res = await service.app.inject('/api/v1/nothing-here')
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ ok: false, error: { code: 'not_found' } })
  })

  it('signs up, creates a chatbot and captures with its key, end to end over HTTP', async () => {
    service = await allInOne()
    const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
    const signup = await fetch(`${base}/api/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: 'ada@example.com',
        password: 'correct horse battery',
        organizationName: 'Acme',
      }),
    })
    expect(signup.status).toBe(200)
    const cookie = signup.headers.get('set-cookie')!.split(';')[0]!
    const created = await fetch(`${base}/api/v1/chatbots`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ name: 'Support bot' }),
    })
    expect(created.status).toBe(200)
    const { apiKey } = (await created.json()) as { apiKey: string }
    const captured = await fetch(`${base}/api/v1/capture`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({
        conversationId: 'c-1',
        messages: [{ id: 'm-1', role: 'user', content: 'Hello' }],
      }),
    })
    expect(captured.status).toBe(200)
    const capturedBody = (await captured.json()) as { conversationId: string }
    expect(capturedBody).toMatchObject({
      ok: true,
      messagesStored: 1,
      analysisQueued: true,
      warnings: [],
    })
    const { rows } = await db.pool.query("SELECT type FROM event_journal WHERE stream_type = 'conversation'")
    expect(rows.map((r) => r.type)).toEqual(['conversation.started', 'conversation.messages-captured'])
    // Projected by the projector's thread, read through the query routes of the main thread.
    const { conversationId } = capturedBody
    const read = await waitFor(
      async () => {
        const res = await fetch(`${base}/api/v1/conversations/${conversationId}`, { headers: { cookie } })
        const body = (await res.json()) as { conversation?: { messages: { content: string }[] } }
        return res.status === 200 && body.conversation && body.conversation.messages.length === 1 && body
      },
      { what: 'the captured conversation in the read models' },
    )
    expect(read.conversation!.messages[0]!.content).toBe('Hello')
    expect(service.projector.worker).toBeDefined()
    const applied = await waitFor(
      async () => {
        const text = await (await fetch(`${base}/metrics`)).text()
        const n = Number(text.match(/cas_consumer_applied_events_total\{group="projector"\} (\d+)/)?.[1] ?? 0)
        return n >= 3 && n
      },
      { what: "the projector thread's counters in the process's metrics" },
    )
    expect(applied).toBeGreaterThanOrEqual(3)
  })

  // trial7: how long a topic re-clustering took was only in the analysis process's GET /analysis, which the
  // all-in-one does not serve (that path is the dashboard's); operators read it in the metrics.
  it("exports each background re-clustering run's duration and outcome in its metrics", async () => {
    service = await allInOne({
      // Due within a second of the first request, whatever their number.
      TOPIC_RECLUSTER_MIN_INTERVAL_SECONDS: '0',
      TOPIC_RECLUSTER_MAX_INTERVAL_SECONDS: '1',
    })
    const app = service.app
    const runs = async (suffix: 'count' | 'sum') =>
      samples((await app.inject('/metrics')).body, `cas_analysis_recluster_duration_seconds_${suffix}`)
    expect((await runs('count')).size).toBe(0)
    const { cookie } = await signUp(app)
    const {
      apiKey,
      chatbot: { id: chatbotId },
    } = await createChatbot(app, cookie, { name: 'Insurer' })
    await captureRequests(app, apiKey, { claim: INSURER.claim, driver: INSURER.driver }, new Map())
    const count = await waitFor(
      async () => ((await runs('count')).get('{outcome="reclustered"}') ?? 0) >= 1 && (await runs('count')),
      { what: 'a re-clustering run in the metrics', timeoutMs: 120_000 },
    )
    expect(count.get('{outcome="failed"}') ?? 0).toBe(0)
    expect((await runs('sum')).get('{outcome="reclustered"}')).toBeGreaterThan(0)
    // A real run: its event is in the chatbot's topic stream.
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM event_journal WHERE type = 'analysis.topics-reclustered' AND stream_id = $1",
      [chatbotId],
    )
    expect(rows[0].n).toBeGreaterThanOrEqual(count.get('{outcome="reclustered"}')!)
  }, 180_000)

  describe.skipIf(kafkaBrokers() === null)('with KAFKA_BROKERS', () => {
    it('creates the topics, checks Kafka in /readyz and relays journal events to Kafka', async () => {
      const brokers = kafkaBrokers()!
      const { kafka, topicPrefix } = await createTestTopics(2)
      service = await allInOne({
        KAFKA_BROKERS: brokers.join(','),
        KAFKA_TOPIC_PREFIX: topicPrefix,
      })
      expect(service.infra.eventLog.kind).toBe('kafka')
      const ready = await service.app.inject('/readyz')
      expect(ready.json()).toMatchObject({
        ok: true,
        checks: { database: 'ok', kafka: 'ok', analyzer: 'ok' },
      })

      const streamId = crypto.randomUUID()
      await withTransaction(db.pool, (c) =>
        appendToStream(c, {
          streamType: 'chatbot',
          streamId,
          orgId: ORG,
          chatbotId: CHATBOT,
          expectedVersion: 0,
          events: [{ type: 'chatbot.renamed', version: 1, payload: { name: 'Support bot' } }],
        }),
      )
      const received: { key: string; value: Record<string, unknown> }[] = []
      const consumer = kafka.consumer({ groupId: uniqueGroupId('all-in-one') })
      await consumer.connect()
      await consumer.subscribe({ topic: topicFor('chatbot', topicPrefix), fromBeginning: true })
      await consumer.run({
        eachMessage: async ({ message }) => {
          received.push({ key: String(message.key), value: JSON.parse(String(message.value)) })
        },
      })
      try {
        await waitFor(() => received.length > 0, { what: 'the relayed event' })
      } finally {
        await consumer.disconnect()
      }
      expect(received[0]!.key).toBe(streamId)
      expect(received[0]!.value).toMatchObject({
        type: 'chatbot.renamed',
        streamId,
        streamVersion: 1,
        orgId: ORG,
        payload: { name: 'Support bot' },
      })
    })

    it("exposes every metric docs/operations.md documents, once: its services' metric sets together", async () => {
      const { topicPrefix } = await createTestTopics(2)
      service = await allInOne({
        KAFKA_BROKERS: kafkaBrokers()!.join(','),
        KAFKA_TOPIC_PREFIX: topicPrefix,
      })
      const doc = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8')
      const documented = [...doc.matchAll(/^\| `(cas_[a-z_]+)`/gm)].map((m) => m[1]!)
      const text = (await service.app.inject('/metrics')).body
      const exposed = [...text.matchAll(/^# TYPE (cas_[a-z_]+) /gm)].map((m) => m[1]!)
      expect(exposed.sort()).toEqual(documented.sort())
    })
  })
})
