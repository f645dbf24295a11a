/**
 * Fault 1: the projector process is SIGKILLed again and again while 20,000 messages are captured. Each
 * batch and its checkpoint commit in one transaction, so after the last restart the read models hold
 * exactly what the capture API acknowledged: nothing lost, nothing counted twice, every conversation's
 * events applied in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { kafkaBrokers } from '../support/kafka.ts'
import { waitFor } from '../support/wait.ts'
import { type Deployment, projectorStats, startDeployment, waitUntilDrained } from './support/deployment.ts'
import { startCaptureLoad } from './support/load.ts'
import { killAllServices, serviceLogs } from './support/processes.ts'
import { expectReadModelsEqualAcknowledged } from './support/read-models.ts'

let d: Deployment

beforeAll(async () => {
  d = await startDeployment({ brokers: kafkaBrokers()!, projectors: 1, sessionTimeoutMs: 3_000 })
})
afterAll(async () => {
  await killAllServices()
  await d?.close()
})

describe('fault 1: kill -9 the projector repeatedly during a load of 20k messages', () => {
  it('ends with read models equal to exactly what capture acknowledged', async () => {
    const [projector] = d.projectors
    const load = startCaptureLoad({
      url: d.gateway.url,
      apiKey: d.chatbot.apiKey,
      conversations: 200,
      capturesPerConversation: 5,
      messagesPerCapture: 20,
      concurrency: 6,
      // Spread over ~25 s, so that most kills land while it runs.
      pauseMs: 50,
    })
    expect(load.plannedMessages).toBeGreaterThanOrEqual(20_000)
    let finished = false
    void load.done.then(() => {
      finished = true
    })

    const kills: number[] = []
    try {
      // Kill it whenever it is in the middle of applying: after it has applied something since it started.
      while (!finished || kills.length < 4) {
        const before = (await projectorStats(projector!)).applied
        await waitFor(async () => finished || (await projectorStats(projector!)).applied > before, {
          timeoutMs: 60_000,
          what: 'the restarted projector to apply events',
        })
        await new Promise((r) => setTimeout(r, Math.random() * 300))
        kills.push(load.acknowledgedCount())
        await projector!.kill('SIGKILL')
        await projector!.start()
      }
      await load.done

      expect(load.failures).toEqual([])
      expect([...load.statuses.keys()]).toEqual([200])
      await waitUntilDrained(d, { relayMs: 60_000, projectorMs: 90_000 })
      await expectReadModelsEqualAcknowledged(d.db.pool, load)
      // The kills landed while the load was running, not only before or after it.
      expect(kills.length).toBeGreaterThanOrEqual(4)
      expect(
        kills.filter((acked) => acked > 0 && acked < load.plannedMessages).length,
      ).toBeGreaterThanOrEqual(3)
      console.log(
        `fault 1: projector killed ${kills.length} times, at ${kills.join(', ')} acknowledged messages`,
      )
    } catch (err) {
      await load.stop()
      throw new Error(`${(err as Error).message}\n${serviceLogs()}`, { cause: err })
    }
  })
})
