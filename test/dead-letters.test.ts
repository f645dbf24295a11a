/**
 * One bad event never stops the pipeline (DESIGN.md guarantee 9), in both modes. Regression (issue 30):
 * a capture holding a lone UTF-16 surrogate answered 200, then the projector and the analysis consumer
 * failed on it forever (jsonb refuses it), and no other organization's captures were projected again.
 * Here such an event is written straight into the journal (and, in Kafka mode, also straight into the
 * topic), past the gateway's checks, while another organization captures.
 */
import { randomUUID } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import {
  countJournalConflicts,
  encodeRecord,
  type JournalRecord,
  listDeadLetters,
  NOT_IN_JOURNAL,
  requestRedrive,
  topicFor,
} from '@cas/eventlog'
import { Metrics } from '@cas/metrics'
import { deadLetterReadiness, observePipelineStatus } from '@cas/platform'
import { afterEach, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import { EVENT_LOG_MODES, startLiveAnalysis, startLiveProjector, startPipeline } from './support/pipeline.ts'
import {
  appendPoisonedConversation,
  appendSchemaInvalidEvent,
  poisonedConversation,
} from './support/poison.ts'
import { waitFor } from './support/wait.ts'

for (const mode of EVENT_LOG_MODES) {
  describe.skipIf(!mode.available)(`dead letters, ${mode.name} mode`, () => {
    const cleanups: (() => Promise<unknown>)[] = []
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
    })

    it('sets aside at once an event that can never be read (not its schema), counts it, and applies the next', async () => {
      const pipeline = await startPipeline(mode.name, cleanups)
      const { db, app } = pipeline
      const { projector, groupId: projectorGroup, projected } = await startLiveProjector(pipeline, cleanups)
      const { analysis, groupId: analysisGroup } = await startLiveAnalysis(pipeline, cleanups)
      const owner = await signUp(app)
      const { chatbot, apiKey } = await createChatbot(app, owner.cookie)

      // Past the gateway's checks: a capture whose message has a role the schema does not know, then
      // a capture of the same chatbot through the API.
      const bad = await appendSchemaInvalidEvent(db.pool, { id: chatbot.id, orgId: owner.organization.id })
      const next = await postCapture(app, apiKey, {
        conversationId: 'after-the-bad-one',
        messages: [{ id: 'u1', role: 'user', content: 'Where is my parcel?' }],
      })
      expect(next.statusCode, next.body).toBe(200)

      for (const group of [projectorGroup, analysisGroup]) {
        const letters = await waitFor(
          async () => {
            const found = await listDeadLetters(db.pool, { groupId: group })
            return found.length > 0 && found
          },
          { timeoutMs: 45_000, what: `the bad event in the dead letters of ${group}` },
        )
        // Set aside at once (a step that knows it can never succeed): one attempt, not the batch's.
        expect(
          letters.map((l) => [l.eventId, l.eventType, l.attempts]),
          group,
        ).toEqual([[bad.id, 'conversation.messages-captured', 1]])
        expect(letters[0]!.error).toMatch(/^invalid_event: /)
      }
      // The next event is applied: its conversation is read back.
      await projected()
      const read = await app.inject({
        method: 'GET',
        url: `/api/v1/conversations/${next.json().conversationId}`,
        headers: { cookie: owner.cookie },
      })
      expect(read.statusCode, read.body).toBe(200)
      expect(read.json().conversation.messages[0].content).toBe('Where is my parcel?')
      // Counted as set aside, not as dropped.
      expect(projector.consumer.stats.deadLettered).toBe(1)
      expect(analysis.consumer.stats.deadLettered).toBe(1)
      expect(projector.consumer.stats.droppedEvents).toEqual({})
      const metrics = new Metrics()
      metrics.observeConsumer(projector.consumer)
      metrics.observeConsumer(analysis.consumer)
      const { body } = await metrics.render()
      for (const group of [projectorGroup, analysisGroup])
        expect(body).toContain(`cas_consumer_dead_lettered_events_total{group="${group}"} 1`)
    })

    it('sets aside an event no consumer can apply while other organizations capture and read on', async () => {
      // Reads wait for their capture to be projected, up to this bound (503 past it).
      const pipeline = await startPipeline(mode.name, cleanups, { READ_YOUR_WRITES_TIMEOUT_MS: '10000' })
      const { db, app } = pipeline
      const { projector, groupId: projectorGroup } = await startLiveProjector(pipeline, cleanups)
      const { groupId: analysisGroup } = await startLiveAnalysis(pipeline, cleanups)

      const victim = await signUp(app)
      const { chatbot: victimBot } = await createChatbot(app, victim.cookie)
      const other = await signUp(app)
      const { apiKey } = await createChatbot(app, other.cookie)

      // A conversation of the victim's chatbot whose message content jsonb cannot hold, sealed with the
      // chatbot's key as the gateway seals, appended past the gateway's checks.
      const orgId = victim.organization.id
      const bad = await appendPoisonedConversation(db.pool, { id: victimBot.id, orgId })
      let straightIntoKafka: JournalRecord | undefined
      if (pipeline.eventLog.kind === 'kafka') {
        // And one that never was in the journal: produced straight into the topic, which the consumers
        // leave out (they apply only what the journal holds) and list, setting nothing aside for it.
        const { kafka, topicPrefix } = pipeline.eventLog
        const kafkaStream = randomUUID()
        const sealed = (await poisonedConversation(db.pool, { id: victimBot.id, orgId }, kafkaStream))[1]!
        straightIntoKafka = {
          ...bad,
          id: randomUUID(),
          streamId: kafkaStream,
          streamVersion: 1,
          payload: sealed.payload,
        }
        const producer = kafka.producer()
        await producer.connect()
        cleanups.push(() => producer.disconnect())
        await producer.send({
          topic: topicFor('conversation', topicPrefix),
          messages: [{ key: kafkaStream, value: encodeRecord(straightIntoKafka) }],
        })
      }

      // The other organization captures and reads each conversation at once, while the bad event fails.
      for (let i = 0; i < 12; i++) {
        const captured = await postCapture(app, apiKey, {
          conversationId: `other-${i}`,
          messages: [{ id: 'u1', role: 'user', content: `Where is my order ${i}?` }],
        })
        expect(captured.statusCode, captured.body).toBe(200)
        const read = await app.inject({
          method: 'GET',
          url: `/api/v1/conversations/${captured.json().conversationId}`,
          headers: { cookie: other.cookie },
        })
        expect(read.statusCode, `read ${i}: ${read.body}`).toBe(200)
        expect(read.json().conversation.messages[0].content).toBe(`Where is my order ${i}?`)
      }

      const expected = [bad.id]
      const projectorLetters = await waitFor(
        async () => {
          const letters = await listDeadLetters(db.pool, { groupId: projectorGroup })
          return letters.length === expected.length && letters
        },
        { timeoutMs: 45_000, what: "the bad events in the projector's dead letters" },
      )
      expect(projectorLetters.map((l) => l.eventId).sort()).toEqual(expected)
      for (const letter of projectorLetters) {
        expect(letter).toMatchObject({ eventType: 'conversation.messages-captured', chatbotId: victimBot.id })
        expect(letter.error).toMatch(/json|surrogate/i)
      }
      if (straightIntoKafka) {
        const notInJournal = { [projectorGroup]: 1, [analysisGroup]: 1 }
        await waitFor(async () => isDeepStrictEqual(await countJournalConflicts(db.pool), notInJournal), {
          what: 'the event never in the journal left out by both groups',
        })
        expect(projector.consumer.stats.droppedEvents).toEqual({ [NOT_IN_JOURNAL]: 1 })
      }
      const analysisLetters = await waitFor(
        async () => {
          const letters = await listDeadLetters(db.pool, { groupId: analysisGroup })
          return letters.length === expected.length && letters
        },
        { timeoutMs: 45_000, what: "the bad events in the analysis's dead letters" },
      )
      expect(analysisLetters.map((l) => l.eventId).sort()).toEqual(expected)
      expect(projector.consumer.stats.deadLettered).toBe(expected.length)
      const readiness = await deadLetterReadiness(db.pool).detail!()
      expect(readiness).toEqual({
        total: 2 * expected.length,
        byGroup: { [projectorGroup]: expected.length, [analysisGroup]: expected.length },
      })

      const metrics = new Metrics()
      metrics.observeConsumer(projector.consumer)
      observePipelineStatus(metrics, db.pool, ['projection'])
      const { body } = await metrics.render()
      expect(body).toContain(`cas_dead_letter_events{group="${projectorGroup}"} ${expected.length}`)
      expect(body).toContain(`cas_dead_letter_events{group="${analysisGroup}"} ${expected.length}`)
      expect(body).toContain(
        `cas_consumer_dead_lettered_events_total{group="${projectorGroup}"} ${expected.length}`,
      )

      // The dashboard's freshness line says up to date: nothing but the events set aside is pending.
      projector.status.start()
      cleanups.push(() => projector.status.stop())
      await waitFor(
        async () => {
          const status = await app.inject({ url: '/api/v1/status', headers: { cookie: other.cookie } })
          return status.statusCode === 200 && status.json().projection.state === 'up-to-date'
        },
        { what: 'the projection up to date', timeoutMs: 30_000 },
      )

      // Everyone else reads on.
      const after = await postCapture(app, apiKey, {
        conversationId: 'other-after',
        messages: [{ id: 'u1', role: 'user', content: 'Thanks!' }],
      })
      const read = await app.inject({
        method: 'GET',
        url: `/api/v1/conversations/${after.json().conversationId}`,
        headers: { cookie: other.cookie },
      })
      expect(read.statusCode, read.body).toBe(200)

      // Re-driven without a fix, it fails again and stays, no longer asked for.
      expect(await requestRedrive(db.pool, { all: true, groupId: projectorGroup })).toBe(expected.length)
      await waitFor(
        async () =>
          (await listDeadLetters(db.pool, { groupId: projectorGroup })).every(
            (l) => l.redriveRequestedAt === null && l.attempts > projectorLetters[0]!.attempts,
          ),
        { what: 'the re-drive to fail again' },
      )
    })
  })
}
