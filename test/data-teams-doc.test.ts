/**
 * docs/data-teams.md's consumer, run as a data team runs it (from the checkout, with the service's
 * KAFKA_BROKERS, KAFKA_TOPIC_PREFIX, master key and a database URL) against a pipeline in Kafka mode: it
 * prints the messages captured, opened with the master key, and their sentiment.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Kafka, logLevel } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import { journalEvents } from './support/journal.ts'
import { kafkaBrokers, uniqueGroupId } from './support/kafka.ts'
import { TEST_MASTER_KEY } from './support/keyring.ts'
import { consumerCaughtUp, startLiveAnalysis, startPipeline, type TestPipeline } from './support/pipeline.ts'
import { waitFor } from './support/wait.ts'

const doc = readFileSync(fileURLToPath(new URL('../docs/data-teams.md', import.meta.url)), 'utf8')

const DOC_GROUP = 'data-team-sentiment'
const example = doc.match(/^## Your own consumer$[\s\S]*?^```ts\n([\s\S]*?)^```$/m)?.[1]

/** Runs the page's consumer against the pipeline until the test ends; `output()` is what it printed. */
function runConsumerExample(pipeline: TestPipeline, cleanups: (() => Promise<unknown>)[], groupId: string) {
  // Inside the repository, where @cas/eventlog and @cas/keyring resolve (the page says to run it there).
  // A group of the test's own, so that a consumer killed by an earlier test holds up no rebalance.
  const file = fileURLToPath(new URL(`./.data-teams-consumer-${groupId}.mts`, import.meta.url))
  expect(example).toContain(`groupId: '${DOC_GROUP}'`)
  writeFileSync(file, example!.replace(`groupId: '${DOC_GROUP}'`, `groupId: '${groupId}'`))
  cleanups.push(async () => rmSync(file, { force: true }))
  const prefix = pipeline.eventLog.kind === 'kafka' ? (pipeline.eventLog.topicPrefix ?? '') : ''
  expect(prefix).not.toBe('')
  let out = ''
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', file], {
    env: {
      PATH: process.env.PATH ?? '',
      KAFKA_BROKERS: kafkaBrokers()!.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      ENCRYPTION_MASTER_KEY: TEST_MASTER_KEY,
      DATABASE_URL: pipeline.db.url,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  // Runs until stopped, as a consumer does; stopped before the pipeline it reads goes.
  cleanups.push(async () => {
    child.kill('SIGKILL')
    await exited
  })
  return { output: () => out, groupId, prefix }
}

/** Whether the group has committed every partition of the two topics the example reads to its end. */
async function readToTheEnd(groupId: string, prefix: string): Promise<boolean> {
  const admin = new Kafka({ brokers: kafkaBrokers()!, logLevel: logLevel.NOTHING }).admin()
  await admin.connect()
  try {
    for (const topic of [`${prefix}conversation-events`, `${prefix}analysis-events`]) {
      const ends = await admin.fetchTopicOffsets(topic)
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] })
      for (const end of ends) {
        const at = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1'
        // A partition the group never read from (nothing in it) has no committed offset: -1.
        if (Math.max(Number(at), Number(end.low)) < Number(end.high)) return false
      }
    }
    return true
  } finally {
    await admin.disconnect()
  }
}

describe.skipIf(!kafkaBrokers())('docs/data-teams.md', () => {
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })

  it('the consumer example prints the captured messages, opened with the master key, and their sentiment', async () => {
    // Regression: it had its brokers written in (127.0.0.1:9092) and read no topic prefix, so against a
    // service with KAFKA_TOPIC_PREFIX it decoded nothing and printed nothing.
    expect(example).toContain('process.env.KAFKA_BROKERS')
    const pipeline = await startPipeline('kafka', cleanups)
    await startLiveAnalysis(pipeline, cleanups)
    const { cookie } = await signUp(pipeline.app)
    const { apiKey, chatbot } = await createChatbot(pipeline.app, cookie)
    const res = await postCapture(pipeline.app, apiKey, {
      conversationId: 'data-team',
      messages: [{ id: 'm-1', role: 'user', content: 'I love how quick the refund was' }],
    })
    expect(res.statusCode).toBe(200)

    const consumer = runConsumerExample(pipeline, cleanups, uniqueGroupId('data-team'))
    await waitFor(
      () =>
        consumer.output().includes(`${chatbot.id} user I love how quick the refund was`) &&
        new RegExp(`${chatbot.id} m-1 (positive|neutral|negative)`).test(consumer.output()),
      { what: 'the consumer to print the message and its sentiment', timeoutMs: 45_000 },
    )
  })

  it("the consumer example skips an erased conversation's analysis that it reads after the erasure (a replay)", async () => {
    // trial2: the example dropped nothing on conversation.erased; a conversation's analysis is on
    // analysis-events and its erasure on conversation-events, with no order between the two topics, so a
    // replay read the erased conversation's sentiment after its erasure, and printed (kept) it.
    const pipeline = await startPipeline('kafka', cleanups)
    const { groupId: analysisGroup } = await startLiveAnalysis(pipeline, cleanups)
    const { cookie } = await signUp(pipeline.app)
    const { apiKey, chatbot } = await createChatbot(pipeline.app, cookie)
    const ids: Record<string, string> = {}
    for (const who of ['gone', 'kept']) {
      const res = await postCapture(pipeline.app, apiKey, {
        conversationId: who,
        messages: [{ id: `${who}-1`, role: 'user', content: `the ${who} question about my refund` }],
        user: { id: `${who}-user` },
      })
      expect(res.statusCode, res.body).toBe(200)
      ids[who] = res.json().conversationId
    }
    // Both analysed and published to Kafka before the erasure, as in a replay of last month's topics.
    const analysed = async (id: string) =>
      (await journalEvents(pipeline.db.pool, 'analysis', id)).some(
        (e) => e.type === 'analysis.messages-analyzed',
      )
    await waitFor(async () => (await analysed(ids.gone!)) && (await analysed(ids.kept!)), {
      what: 'both conversations to be analysed',
    })
    await waitFor(() => consumerCaughtUp(pipeline, analysisGroup, ['conversation', 'chatbot']), {
      what: 'the relay to publish them',
    })
    const erased = await pipeline.app.inject({
      method: 'DELETE',
      url: `/api/v1/chatbots/${chatbot.id}/users/gone-user`,
      headers: { cookie },
    })
    expect(erased.json()).toEqual({ ok: true, conversationsErased: 1 })
    await waitFor(() => consumerCaughtUp(pipeline, analysisGroup, ['conversation', 'chatbot']), {
      what: 'the erasure to be published',
    })

    const consumer = runConsumerExample(pipeline, cleanups, uniqueGroupId('data-team'))
    await waitFor(() => readToTheEnd(consumer.groupId, consumer.prefix), {
      what: 'the consumer to read both topics to their end',
      timeoutMs: 45_000,
    })
    const lines = consumer.output().split('\n')
    const erasedAt = lines.indexOf(`erased ${ids.gone}`)
    expect(erasedAt, consumer.output()).toBeGreaterThanOrEqual(0)
    const sentiment = (who: string) => new RegExp(`^${chatbot.id} ${who}-1 (positive|neutral|negative)$`)
    expect(lines.slice(erasedAt).filter((l) => sentiment('gone').test(l))).toEqual([])
    expect(
      lines.some((l) => sentiment('kept').test(l)),
      consumer.output(),
    ).toBe(true)
  })
})
