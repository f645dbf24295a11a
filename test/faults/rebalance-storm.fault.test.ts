/**
 * Fault 5: a rebalance storm. Three projector processes share one consumer group; every few seconds one
 * of them is restarted (SIGKILL and SIGTERM by turns) while captures come in, so partitions keep moving
 * between members, sometimes while a batch is in flight. Checkpoints live in Postgres and are locked by
 * each batch's transaction, so no event is applied twice, each conversation's events are applied in
 * order, and once the storm ends the lag drains to zero.
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
  d = await startDeployment({
    brokers: kafkaBrokers()!,
    projectors: 3,
    partitions: 6,
    sessionTimeoutMs: 3_000,
  })
})
afterAll(async () => {
  await killAllServices()
  await d?.close()
})

describe('fault 5: rebalance storm, three projectors in one group', () => {
  it('applies every event once and in stream order, and the lag drains', async () => {
    // All three are members of one group (the deployment's, prefixed like its topics).
    await waitFor(
      async () => {
        const { groups } = await d.admin.describeGroups([d.projectorKafkaGroup])
        return groups[0]?.state === 'Stable' && groups[0].members.length === 3
      },
      { timeoutMs: 60_000, what: 'three projectors in one stable group' },
    )

    const load = startCaptureLoad({
      url: d.gateway.url,
      apiKey: d.chatbot.apiKey,
      conversations: 160,
      capturesPerConversation: 5,
      messagesPerCapture: 10,
      concurrency: 4,
      // Spread over ~25 s, the length of the storm.
      pauseMs: 120,
    })
    let finished = false
    void load.done.then(() => {
      finished = true
    })
    const restarts: string[] = []
    try {
      for (let i = 0; !finished || restarts.length < 6; i++) {
        await new Promise((r) => setTimeout(r, 1_000 + Math.random() * 2_000))
        const projector = d.projectors[i % 3]!
        const signal = i % 2 === 0 ? 'SIGKILL' : 'SIGTERM'
        await (signal === 'SIGKILL' ? projector.kill('SIGKILL') : projector.stop())
        await projector.start()
        restarts.push(`${projector.name} ${signal} at ${load.acknowledgedCount()}`)
      }
      await load.done
      expect(load.failures).toEqual([])
      expect([...load.statuses.keys()]).toEqual([200])

      await waitUntilDrained(d, { relayMs: 60_000, projectorMs: 90_000 })
      await expectReadModelsEqualAcknowledged(d.db.pool, load)
      // The group settles with all three members sharing the partitions again.
      await waitFor(
        async () => {
          const stats = await Promise.all(d.projectors.map((p) => projectorStats(p)))
          return stats.every((s) => s.partitions.length > 0)
        },
        { timeoutMs: 60_000, what: 'all three projectors to own partitions again' },
      )
      expect(restarts.length).toBeGreaterThanOrEqual(6)
      console.log(`fault 5: ${restarts.length} restarts: ${restarts.join(', ')}`)
    } catch (err) {
      await load.stop()
      throw new Error(`${(err as Error).message}\n${serviceLogs()}`, { cause: err })
    }
  })
})
