/**
 * The event-log and analysis metrics against real Postgres and Kafka: consumer lag per partition (the
 * log's end against the checkpoint in Postgres), projection lag in seconds, relay lag, and the analysis
 * backlog, retries and dead letters, read through the Prometheus text a scrape gets.
 */
import {
  createEventConsumer,
  type EventConsumer,
  type EventLogBackend,
  RELAY_GROUP,
  Relay,
  relayLag,
  topicFor,
} from '@cas/eventlog'
import { Metrics } from '@cas/metrics'
import { ANALYSIS_METRICS, createAnalysisService } from '@cas/service-analysis'
import { RELAY_METRICS } from '@cas/service-relay'
import { afterEach, describe, expect, it } from 'vitest'
import { ScriptedAnalyzer } from '../services/analysis/test/scripted-analyzer.ts'
import { signUp } from './support/auth.ts'
import { captureBody, createChatbot, postCapture } from './support/chatbots.ts'
import { createTestTopics, kafkaBrokers, uniqueGroupId } from './support/kafka.ts'
import { testKeyring } from './support/keyring.ts'
import { samples } from './support/metrics.ts'
import { EVENT_LOG_MODES, startPipeline } from './support/pipeline.ts'
import { projectorCaughtUp } from './support/projector.ts'
import { waitFor } from './support/wait.ts'

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0)

const HOUR_MS = 3_600_000

/**
 * Kafka mode: a reader of the messages now on the conversation topic, per partition (its offsets from the
 * earliest kept to the end), with an admin client of its own that `cleanups` disconnects.
 */
async function topicMessages(eventLog: EventLogBackend, cleanups: (() => Promise<unknown>)[]) {
  if (eventLog.kind !== 'kafka') throw new Error('the messages on a topic are a Kafka notion')
  const admin = eventLog.kafka.admin()
  await admin.connect()
  cleanups.push(() => admin.disconnect())
  const topic = topicFor('conversation', eventLog.topicPrefix)
  return async () =>
    (await admin.fetchTopicOffsets(topic)).map((p) => ({
      topic,
      partition: p.partition,
      messages: Number(p.high) - Number(p.low),
    }))
}

for (const mode of EVENT_LOG_MODES) {
  describe.skipIf(!mode.available)(`event-log metrics, ${mode.name} mode`, () => {
    const cleanups: (() => Promise<unknown>)[] = []
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
    })

    it('reports consumer lag per partition until the batch commits, then the projection lag in seconds', async () => {
      // Events recorded an hour ago: the projection lag is at least that once they are applied.
      const past = () => new Date(Date.now() - HOUR_MS)
      const { db, app, eventLog } = await startPipeline(mode.name, cleanups, {}, past)
      const { apiKey } = await createChatbot(app, (await signUp(app)).cookie)
      for (const c of ['lag-1', 'lag-2', 'lag-3']) {
        expect((await postCapture(app, apiKey, captureBody(c, 2))).statusCode).toBe(200)
      }
      const events = 6 // conversation.started + conversation.messages-captured, per conversation

      let open!: () => void
      const gate = new Promise<void>((resolve) => {
        open = resolve
      })
      const groupId = uniqueGroupId('metrics')
      let batchHeld = false
      const consumer: EventConsumer = createEventConsumer(eventLog, {
        pool: db.pool,
        groupId,
        streamTypes: ['conversation'],
        handler: () => {
          batchHeld = true
          return gate
        },
      })
      const metrics = new Metrics()
      metrics.observeConsumer(consumer)
      await consumer.start()
      cleanups.push(async () => {
        open()
        await consumer.stop()
      })

      // While the first batch is held open, nothing is committed: everything in the log is lag. In Kafka
      // mode that is every message on the topic's partitions, which may be more than the events: the
      // relay sends a batch again whole when a partition refused part of it (a broker that failed or was
      // slow; consumers drop the copies), so a partition's lag is its offsets, not a count
      // of events. Wait for the relay to have published every event, and each partition's lag to be all
      // its messages, once the first batch is in the handler and held there.
      const inLog = mode.name === 'kafka' ? await topicMessages(eventLog, cleanups) : undefined
      const held = await waitFor(
        async () => {
          if (!batchHeld) return false
          const lag = samples((await metrics.render()).body, 'cas_consumer_lag_events')
          if (!inLog) return sum(lag) === events && lag
          if (!(await projectorCaughtUp(db.pool, RELAY_GROUP, 1))) return false
          const partitions = await inLog()
          const whole = partitions.every(
            (p) =>
              lag.get(`{group="${groupId}",topic="${p.topic}",partition="${p.partition}"}`) === p.messages,
          )
          return whole && lag.size === partitions.length && sum(lag) >= events && lag
        },
        { what: `every message in the log as lag (${events} events)` },
      )
      for (const labels of held.keys())
        expect(labels).toMatch(new RegExp(`^\\{group="${groupId}",topic="[^"]+",partition="\\d+"\\}$`))
      if (mode.name === 'kafka') expect(held.size).toBe(4)
      // Held, it stays so: had the consumer committed anyway, the lag would have dropped by now.
      expect(samples((await metrics.render()).body, 'cas_consumer_lag_events')).toEqual(held)
      expect(samples((await metrics.render()).body, 'cas_projection_lag_seconds').size).toBe(0)

      open()
      // Gauges read Postgres at scrape time, counters the process's own tallies: wait for both.
      const text = await waitFor(
        async () => {
          const body = (await metrics.render()).body
          return (
            sum(samples(body, 'cas_consumer_lag_events')) === 0 &&
            samples(body, 'cas_consumer_applied_events_total').get(`{group="${groupId}"}`) === events &&
            body
          )
        },
        { what: 'the lag to drain' },
      )
      const lagSeconds = samples(text, 'cas_projection_lag_seconds').get(`{group="${groupId}"}`)
      expect(lagSeconds).toBeGreaterThanOrEqual(HOUR_MS / 1000)
    })

    it('reports the analysis backlog while a job runs, then retries and dead letters', async () => {
      const { db, app, eventLog } = await startPipeline(mode.name, cleanups)
      const analyzer = new ScriptedAnalyzer()
      const analysis = createAnalysisService({
        pool: db.pool,
        keyring: testKeyring,
        eventLog,
        analyzer,
        logger: false,
        groupId: uniqueGroupId('analysis'),
        maxAttempts: 2,
        retryBaseMs: 1,
      })
      const metrics = new Metrics()
      metrics.use(ANALYSIS_METRICS).observe({ stats: analysis.jobRunner.stats, jobs: () => analysis.jobs() })
      analyzer.hold()
      await analysis.start()
      cleanups.push(async () => {
        analyzer.release()
        await analysis.stop()
      })
      const { apiKey } = await createChatbot(app, (await signUp(app)).cookie)
      const body = {
        conversationId: 'failing',
        messages: [{ id: 'm-1', role: 'user', content: 'fail:retryable' }],
      }
      expect((await postCapture(app, apiKey, body)).statusCode).toBe(200)

      await waitFor(
        async () => samples((await metrics.render()).body, 'cas_analysis_backlog_jobs').get('') === 1,
        { what: 'a backlog of one job' },
      )
      analyzer.release()
      const text = await waitFor(
        async () => {
          const scrape = (await metrics.render()).body
          return (
            samples(scrape, 'cas_analysis_dead_letters').get('') === 1 &&
            samples(scrape, 'cas_analysis_dead_lettered_total').get('') === 1 &&
            samples(scrape, 'cas_analysis_backlog_jobs').get('') === 0 &&
            scrape
          )
        },
        { what: 'the job to be dead-lettered' },
      )
      expect(samples(text, 'cas_analysis_retries_total').get('')).toBe(1)
      expect(samples(text, 'cas_analysis_messages_analyzed_total').get('')).toBe(0)
    })
  })
}

describe.skipIf(kafkaBrokers() === null)('relay metrics', () => {
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })

  it('reports the journal events not yet in Kafka, which drain once the relay runs', async () => {
    const { db, app } = await startPipeline('journal', cleanups)
    const { apiKey } = await createChatbot(app, (await signUp(app)).cookie)
    expect((await postCapture(app, apiKey, captureBody('relay-lag', 2))).statusCode).toBe(200)
    const { kafka, topicPrefix } = await createTestTopics(2)
    const relay = new Relay({ pool: db.pool, kafka, topicPrefix, pollIntervalMs: 5 })
    const metrics = new Metrics()
    metrics.use(RELAY_METRICS).observe({ stats: relay.stats, lag: () => relayLag(db.pool) })

    // organization.created and member-joined (the sign-up), chatbot.created, conversation.started,
    // conversation.messages-captured
    await waitFor(async () => samples((await metrics.render()).body, 'cas_relay_lag_events').get('') === 5, {
      what: 'a relay lag of 5',
    })
    expect(samples((await metrics.render()).body, 'cas_relay_leader').get('')).toBe(0)
    await relay.start()
    cleanups.push(() => relay.stop())
    const text = await waitFor(
      async () => {
        const scrape = (await metrics.render()).body
        return (
          samples(scrape, 'cas_relay_lag_events').get('') === 0 &&
          samples(scrape, 'cas_relay_published_events_total').get('') === 5 &&
          scrape
        )
      },
      { what: 'the relay lag to drain' },
    )
    expect(samples(text, 'cas_relay_leader').get('')).toBe(1)
  })
})
