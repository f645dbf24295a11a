/**
 * Fault 6: a three-broker KRaft cluster on loopback (replication factor 3, min.insync.replicas=2; the relay
 * produces with acks=all), whose partition leader is SIGKILLed under load. A batch the relay saw
 * acknowledged is on two brokers, unclean leader election is off, so the new leader has it: every
 * message the capture API acknowledged ends up in the read models, once. The killed broker is then
 * restarted and rejoins every in-sync replica set.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { topicFor } from '@cas/eventlog'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type KafkaCluster, startKafkaCluster } from '../../infra/kafka/broker.ts'
import { waitFor } from '../support/wait.ts'
import { type Deployment, startDeployment, waitUntilDrained } from './support/deployment.ts'
import { startCaptureLoad } from './support/load.ts'
import { killAllServices, serviceLogs } from './support/processes.ts'
import { expectReadModelsEqualAcknowledged } from './support/read-models.ts'
import { compareJournalWithKafka } from './support/topics.ts'

let dataDir: string
let cluster: KafkaCluster
let d: Deployment

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cas-fault-cluster-'))
  // Small heaps, C1 only: three JVMs start on two cores next to everything else.
  cluster = await startKafkaCluster({
    dataDir,
    nodes: 3,
    heapMb: 256,
    jvmArgs: ['-XX:TieredStopAtLevel=1'],
  })
  d = await startDeployment({ brokers: cluster.brokers, replicationFactor: 3, partitions: 6 })
})
afterAll(async () => {
  await killAllServices()
  await d?.close()
  await Promise.all(cluster?.nodes.map((n) => n.kill()) ?? [])
  fs.rmSync(dataDir, { recursive: true, force: true })
})

/** Leader node id of each partition of the topic, as the cluster reports it now. */
async function leaders(topic: string): Promise<Map<number, number>> {
  const { topics } = await d.admin.fetchTopicMetadata({ topics: [topic] })
  return new Map(topics[0]!.partitions.map((p) => [p.partitionId, p.leader]))
}

describe('fault 6: kill the partition leader of a three-broker cluster under load', () => {
  it('ends with every acknowledged message in the read models', async () => {
    const conversations = topicFor('conversation', d.topicPrefix)
    // The topics the services created: three replicas, and acks=all needs two of them in sync.
    const { topics } = await d.admin.fetchTopicMetadata({ topics: [conversations] })
    expect(topics[0]!.partitions.every((p) => p.replicas.length === 3 && p.isr.length === 3)).toBe(true)
    const { resources } = await d.admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: 2 /* TOPIC */, name: conversations, configNames: ['min.insync.replicas'] }],
    })
    expect(resources[0]!.configEntries).toEqual([
      expect.objectContaining({ configName: 'min.insync.replicas', configValue: '2', isDefault: false }),
    ])

    const load = startCaptureLoad({
      url: d.gateway.url,
      apiKey: d.chatbot.apiKey,
      conversations: 120,
      capturesPerConversation: 5,
      messagesPerCapture: 10,
      concurrency: 4,
      pauseMs: 100,
    })
    try {
      await load.reached(load.plannedMessages / 3)
      // The broker leading the most partitions of the conversation topic (partition 0's on a tie).
      const before = await leaders(conversations)
      const counts = new Map<number, number>()
      for (const leader of before.values()) counts.set(leader, (counts.get(leader) ?? 0) + 1)
      const victim = [...counts].sort((a, b) => b[1] - a[1] || (a[0] === before.get(0) ? -1 : 1))[0]![0]
      await cluster.node(victim).kill()
      const acknowledgedAtKill = load.acknowledgedCount()

      // Its partitions get new leaders among the two survivors, and the load goes on.
      await waitFor(
        async () => [...(await leaders(conversations)).values()].every((l) => l >= 0 && l !== victim),
        {
          timeoutMs: 60_000,
          what: `partitions led by broker ${victim} to get a new leader`,
        },
      )
      await load.done
      expect(load.failures).toEqual([])
      expect([...load.statuses.keys()]).toEqual([200])
      expect(load.acknowledgedCount()).toBeGreaterThan(acknowledgedAtKill)

      await waitUntilDrained(d, { relayMs: 90_000, projectorMs: 90_000 })
      const kafka = await compareJournalWithKafka(d.db.pool, d.kafka, d.admin, d.topics)
      expect(kafka.missing, 'committed events missing from Kafka').toEqual([])
      await expectReadModelsEqualAcknowledged(d.db.pool, load)
      // The killed broker comes back with its data and catches up: every partition is in sync on three again.
      await cluster.node(victim).start()
      await waitFor(
        async () => {
          const { topics } = await d.admin.fetchTopicMetadata({ topics: [conversations] })
          return topics[0]!.partitions.every((p) => p.isr.length === 3)
        },
        { timeoutMs: 60_000, what: `broker ${victim} back in every in-sync replica set` },
      )
      console.log(
        `fault 6: killed broker ${victim} (leader of ${counts.get(victim)} of ${before.size} partitions) at ${acknowledgedAtKill} acknowledged messages; ${kafka.journal} events, none lost`,
      )
    } catch (err) {
      await load.stop()
      throw new Error(`${(err as Error).message}\n${serviceLogs()}`, { cause: err })
    }
  })
})
