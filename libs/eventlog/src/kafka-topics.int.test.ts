/**
 * New topics are ready for the relay's first send once ensureTopics returns: every partition takes it the
 * first time, so no part of it is sent twice. Before ensureTopics waited for each partition's leader to
 * serve it (waitForTopicLeaders), a KRaft broker refused part of the first send to fresh topics
 * (NOT_LEADER_OR_FOLLOWER: its metadata named leaders its replica manager did not host yet) and
 * `sendEvery` sent all of it again: the partitions that had taken it held two copies.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { kafkaBrokers } from '../../../test/support/kafka.ts'
import { createKafka, createRelayProducer, ensureTopics, sendEvery } from './kafka.ts'
import { topicFor } from './topics.ts'

const PARTITIONS = 12
const EVENTS = 48

describe.skipIf(kafkaBrokers() === null)('ensureTopics, then the relay’s first send', () => {
  const kafka = createKafka({ brokers: kafkaBrokers() ?? [], clientId: 'test', logLevel: 'nothing' })
  const admin = kafka.admin()
  const producer = createRelayProducer(kafka)
  let attempts = 0

  beforeAll(async () => {
    await admin.connect()
    await producer.connect()
    const sendBatch = producer.sendBatch.bind(producer)
    producer.sendBatch = (batch) => {
      attempts++
      return sendBatch(batch)
    }
  })
  afterAll(async () => {
    await producer.disconnect()
    await admin.disconnect()
  })

  it('writes each event once on fresh topics, in one send (three fresh topics in a row)', async () => {
    for (let round = 0; round < 3; round++) {
      const prefix = `t${randomBytes(4).toString('hex')}.`
      await ensureTopics(admin, { prefix, partitions: PARTITIONS, streamTypes: ['conversation'] })
      const topic = topicFor('conversation', prefix)
      attempts = 0
      // Keys spread over every partition: each is asked to take some of the send.
      const messages = Array.from({ length: EVENTS }, (_, i) => ({ key: `stream-${i}`, value: `event ${i}` }))
      await sendEvery(producer, [{ topic, messages }])
      const offsets = await admin.fetchTopicOffsets(topic)
      expect(offsets.filter((p) => Number(p.high) > 0).length).toBeGreaterThan(PARTITIONS / 2)
      expect({ round, onTheTopic: offsets.reduce((n, p) => n + Number(p.high), 0), attempts }).toEqual({
        round,
        onTheTopic: EVENTS,
        attempts: 1,
      })
    }
  })
})
