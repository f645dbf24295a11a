/**
 * Regression (mend3): the all-in-one's first start on a new Kafka logged some 14 kafkajs ERROR lines (a
 * partition's leader not serving it yet, the group coordinator not there yet), all retried and none a
 * failure, which an operator reads as one. Started on a broker of its own, with nothing on it yet.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '@cas/db'
import { afterEach, describe, expect, it } from 'vitest'
import { type KafkaBroker, startKafka } from '../infra/kafka/broker.ts'
import { signUpWithChatbot } from './support/capture-load.ts'
import { captureBody } from './support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from './support/database.ts'
import { kafkaBrokers } from './support/kafka.ts'
import { modelConfigEnv } from './support/model.ts'
import { waitFor } from './support/wait.ts'
import { spawnWorker, type Worker } from './support/worker-process.ts'

const ALL_IN_ONE = fileURLToPath(new URL('../services/all-in-one/src/main.ts', import.meta.url))

/** A line at level error or above: pino's (50, 60) or kafkajs's own (`"level":"ERROR"`), or plain text. */
function isErrorLine(line: string): boolean {
  if (!line.trim()) return false
  try {
    const { level } = JSON.parse(line) as { level?: unknown }
    return typeof level === 'number' ? level >= 50 : String(level).toUpperCase() === 'ERROR'
  } catch {
    return /\berror\b/i.test(line)
  }
}

describe.skipIf(kafkaBrokers() === null)('the first start on a new Kafka', () => {
  let dataDir: string | undefined
  let broker: KafkaBroker | undefined
  let db: TestDatabase | undefined
  let child: Worker | undefined
  afterEach(async () => {
    await child?.kill('SIGKILL')
    await broker?.kill()
    await db?.drop()
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('logs no line at level error while it creates the topics, joins its groups and relays', async () => {
    // Given a broker with no topics and no consumer groups (its __consumer_offsets not created yet)
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cas-first-start-'))
    broker = await startKafka({ dataDir, heapMb: 256, jvmArgs: ['-XX:TieredStopAtLevel=1'] })
    db = await createTestDatabase()
    const port = await freePort()

    // When the all-in-one starts on it, and a capture goes through the relay to the consumers
    child = spawnWorker(
      {
        DATABASE_URL: db.url,
        KAFKA_BROKERS: broker.brokers.join(','),
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        ...modelConfigEnv(),
      },
      ALL_IN_ONE,
    )
    await child.waitForLine((l) => l.includes('conversation analytics is up'), 120_000)
    for (const group of ['projector', 'analysis'])
      await child.waitForLine((l) => l.includes('joined the consumer group') && l.includes(`"${group}"`))
    const base = `http://127.0.0.1:${port}`
    const { apiKey } = await signUpWithChatbot(base)
    const captured = await fetch(`${base}/api/v1/capture`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(captureBody('first-start', 2)),
    })
    expect(captured.status).toBe(200)
    await waitFor(
      async () => {
        const { rows } = await db!.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM rm_messages')
        return rows[0]!.n === 2
      },
      { timeoutMs: 60_000, what: 'the capture projected through Kafka' },
    )

    // Then not one line at level error, on stdout or stderr
    expect([...child.lines, ...child.stderrLines].filter(isErrorLine)).toEqual([])
  })
})
