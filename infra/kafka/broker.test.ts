import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Kafka, logLevel, Partitioners } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KAFKA_VERSION, type KafkaBroker, startKafka } from './broker'

let dataDir = ''
const started: KafkaBroker[] = []

beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kafka-broker-test-'))
})

afterAll(async () => {
  for (const b of started) await b.kill() // no-op for brokers already stopped
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true })
}, 60_000)

async function start(port?: number) {
  const broker = await startKafka({ dataDir, port })
  started.push(broker)
  return broker
}

/** Reads `count` messages of `topic` from the beginning with a fresh consumer group. */
async function readFromBeginning(brokers: string[], topic: string, count: number): Promise<string[]> {
  const kafka = new Kafka({ clientId: 'broker-test', brokers, logLevel: logLevel.NOTHING })
  const consumer = kafka.consumer({ groupId: `reader-${Date.now()}`, maxWaitTimeInMs: 100 })
  const values: string[] = []
  let resolveDone = () => {}
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve
  })
  await consumer.connect()
  try {
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ message }) => {
        values.push(message.value?.toString() ?? '')
        if (values.length >= count) resolveDone()
      },
    })
    await withDeadline(done, 30_000, `${count} message(s) from ${topic}`)
    return values
  } finally {
    await consumer.disconnect()
  }
}

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

function javaBrokerPids(): number[] {
  try {
    return execFileSync('pgrep', ['-f', `kafka.Kafka ${dataDir}`], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number)
  } catch {
    return [] // pgrep exits 1 when nothing matches
  }
}

describe('startKafka', () => {
  it('produces, consumes, stops cleanly, restarts on the same dataDir and port with its data', async () => {
    const first = await start()
    expect(first.version).toBe(KAFKA_VERSION)
    expect(first.brokers).toEqual([`127.0.0.1:${first.port}`])
    expect(javaBrokerPids()).toEqual([first.pid])

    const kafka = new Kafka({ clientId: 'broker-test', brokers: first.brokers, logLevel: logLevel.NOTHING })
    const admin = kafka.admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic: 'durable', numPartitions: 1 }], waitForLeaders: true })
    await admin.disconnect()
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
    await producer.connect()
    await producer.send({ topic: 'durable', acks: -1, messages: [{ key: 'k', value: 'before restart' }] })
    await producer.disconnect()
    expect(await readFromBeginning(first.brokers, 'durable', 1)).toEqual(['before restart'])

    await first.stop()
    expect(await first.exited).toMatchObject({ signal: null }) // exited by itself after SIGTERM, not SIGKILLed
    expect(isRunning(first.pid)).toBe(false)
    expect(javaBrokerPids()).toEqual([])
    expect(fs.readFileSync(first.logFile, 'utf8')).toContain('shut down completed')

    const second = await start(first.port)
    expect(second.brokers).toEqual(first.brokers)
    expect(second.controllerPort).toBe(first.controllerPort)
    expect(await readFromBeginning(second.brokers, 'durable', 1)).toEqual(['before restart'])

    await second.kill()
    expect(isRunning(second.pid)).toBe(false)
    // Restart after a crash (SIGKILL) recovers the log, too.
    const third = await start(first.port)
    expect(await readFromBeginning(third.brokers, 'durable', 1)).toEqual(['before restart'])
    await third.stop()
    expect(javaBrokerPids()).toEqual([])
  }, 240_000)
})
