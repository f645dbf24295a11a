/**
 * Fault 3: the Kafka broker goes away during capture load, twice: a clean stop, then a crash (SIGKILL),
 * each followed by a restart on the same data and port. Capture never depends on Kafka (it commits to
 * the journal), so it keeps answering 200; the relay retries until the broker is back and catches up;
 * nothing is lost and nothing is applied twice. The broker is this test's own, not the shared one.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type KafkaBroker, startKafka } from '../../infra/kafka/broker.ts'
import { type Deployment, startDeployment, waitUntilDrained } from './support/deployment.ts'
import { startCaptureLoad } from './support/load.ts'
import { killAllServices, serviceLogs } from './support/processes.ts'
import { expectReadModelsEqualAcknowledged } from './support/read-models.ts'
import { compareJournalWithKafka } from './support/topics.ts'

// A small heap and C1 only: it starts (three times) next to the shared broker on two cores.
const BROKER = { heapMb: 256, jvmArgs: ['-XX:TieredStopAtLevel=1'] }
let dataDir: string
let broker: KafkaBroker
let d: Deployment

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cas-fault-broker-'))
  broker = await startKafka({ dataDir, ...BROKER })
  d = await startDeployment({ brokers: broker.brokers })
})
afterAll(async () => {
  await killAllServices()
  await d?.close()
  await broker?.kill()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

describe('fault 3: stop and restart the Kafka broker during capture load', () => {
  it('keeps capture answering 200; the relay catches up and nothing is lost', async () => {
    const load = startCaptureLoad({
      url: d.gateway.url,
      apiKey: d.chatbot.apiKey,
      conversations: 120,
      capturesPerConversation: 5,
      messagesPerCapture: 10,
      concurrency: 4,
      // Spread over ~25 s: captures keep coming through both outages.
      pauseMs: 140,
    })
    const outages: { how: string; acknowledgedWhileDown: number }[] = []
    try {
      for (const [fraction, how] of [
        [0.2, 'stop'],
        [0.55, 'kill'],
      ] as const) {
        await load.reached(load.plannedMessages * fraction)
        await (how === 'stop' ? broker.stop() : broker.kill())
        const before = load.acknowledgedCount()
        // Down for a while under load: captures must go on being acknowledged.
        await load.reached(before + 250, 30_000)
        outages.push({ how, acknowledgedWhileDown: load.acknowledgedCount() - before })
        broker = await startKafka({ dataDir, port: broker.port, ...BROKER })
      }
      await load.done
      expect(load.failures).toEqual([])
      expect([...load.statuses.keys()]).toEqual([200])

      await waitUntilDrained(d, { relayMs: 90_000, projectorMs: 90_000 })
      const kafka = await compareJournalWithKafka(d.db.pool, d.kafka, d.admin, d.topics)
      expect(kafka.missing, 'committed events missing from Kafka').toEqual([])
      await expectReadModelsEqualAcknowledged(d.db.pool, load)
      console.log(
        `fault 3: ${outages.map((o) => `broker ${o.how}: ${o.acknowledgedWhileDown} messages acknowledged while it was down`).join('; ')}`,
      )
    } catch (err) {
      await load.stop()
      throw new Error(`${(err as Error).message}\n${serviceLogs()}`, { cause: err })
    }
  })
})
