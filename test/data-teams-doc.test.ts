/**
 * docs/data-teams.md's consumer, run as a data team runs it (from the checkout, with the service's
 * KAFKA_BROKERS, KAFKA_TOPIC_PREFIX, master key and a database URL) against a pipeline in Kafka mode: it
 * prints the messages captured, opened with the master key, and their sentiment.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import { kafkaBrokers } from './support/kafka.ts'
import { TEST_MASTER_KEY } from './support/keyring.ts'
import { startLiveAnalysis, startPipeline } from './support/pipeline.ts'
import { waitFor } from './support/wait.ts'

const doc = readFileSync(fileURLToPath(new URL('../docs/data-teams.md', import.meta.url)), 'utf8')

describe.skipIf(!kafkaBrokers())('docs/data-teams.md', () => {
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })

  it('the consumer example prints the captured messages, opened with the master key, and their sentiment', async () => {
    // Regression: it had its brokers written in (127.0.0.1:9092) and read no topic prefix, so against a
    // service with KAFKA_TOPIC_PREFIX it decoded nothing and printed nothing.
    const consumer = doc.match(/^## Your own consumer$[\s\S]*?^```ts\n([\s\S]*?)^```$/m)?.[1]
    expect(consumer).toContain('process.env.KAFKA_BROKERS')
    const pipeline = await startPipeline('kafka', cleanups)
    await startLiveAnalysis(pipeline, cleanups)
    const { cookie } = await signUp(pipeline.app)
    const { apiKey, chatbot } = await createChatbot(pipeline.app, cookie)
    const res = await postCapture(pipeline.app, apiKey, {
      conversationId: 'data-team',
      messages: [{ id: 'm-1', role: 'user', content: 'I love how quick the refund was' }],
    })
    expect(res.statusCode).toBe(200)

    // Inside the repository, where @cas/eventlog and @cas/keyring resolve (the page says to run it there).
    const file = fileURLToPath(new URL('./.data-teams-consumer.mts', import.meta.url))
    writeFileSync(file, consumer!)
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
    await waitFor(
      () =>
        out.includes(`${chatbot.id} user I love how quick the refund was`) &&
        new RegExp(`${chatbot.id} m-1 (positive|neutral|negative)`).test(out),
      { what: 'the consumer to print the message and its sentiment', timeoutMs: 45_000 },
    )
  })
})
