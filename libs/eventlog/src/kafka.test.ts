import { randomBytes, randomUUID } from 'node:crypto'
import { Partitioners, type PartitionMetadata } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { KeyPartitioner, sendLane } from './kafka.ts'

function metadata(count: number): PartitionMetadata[] {
  return Array.from({ length: count }, (_, partitionId) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 1,
    replicas: [1],
    isr: [1],
  }))
}

/** The partition kafkajs' own DefaultPartitioner gives `key` among `count`. */
function kafkajsPartition(key: string, count: number): number {
  return Partitioners.DefaultPartitioner()({
    topic: 't',
    partitionMetadata: metadata(count),
    message: { key, value: 'v' },
  })
}

const uuids = Array.from({ length: 1_000 }, () => randomUUID())
// Every length from 0 to 40 bytes (every tail length of murmur2), with bytes above 0x7f and multi-byte
// characters.
const strings = [
  ...Array.from({ length: 41 }, (_, n) => randomBytes(n).toString('latin1')),
  ...Array.from({ length: 41 }, (_, n) => 'é✓'.repeat(n)),
  '',
  'a',
]

describe('KeyPartitioner', () => {
  it("puts every key on the partition kafkajs' DefaultPartitioner (Kafka's Java client's) puts it", () => {
    const ours = KeyPartitioner()
    for (const count of [1, 4, 7, 12, 100]) {
      for (const key of [...uuids, ...strings]) {
        const partition = ours({
          topic: 't',
          partitionMetadata: metadata(count),
          message: { key, value: 'v' },
        })
        expect(partition, `key ${JSON.stringify(key)}, ${count} partitions`).toBe(
          kafkajsPartition(key, count),
        )
      }
    }
  })

  it('keeps an explicit partition', () => {
    const ours = KeyPartitioner()
    expect(
      ours({ topic: 't', partitionMetadata: metadata(4), message: { key: 'k', value: 'v', partition: 3 } }),
    ).toBe(3)
  })
})

describe('sendLane', () => {
  it('gives a stream one lane, the same every time, and uses every lane', () => {
    for (const lanes of [1, 3, 4, 7]) {
      const used = new Set<number>()
      for (const key of uuids) {
        const lane = sendLane(key, lanes)
        expect(lane).toBe(sendLane(key, lanes))
        expect(lane).toBeGreaterThanOrEqual(0)
        expect(lane).toBeLessThan(lanes)
        used.add(lane)
      }
      expect(used.size).toBe(lanes)
    }
  })

  it('is the partition modulo the lanes when the partition count is a multiple of them', () => {
    // Then concurrent requests never write to the same partition.
    for (const [partitions, lanes] of [
      [12, 4],
      [12, 3],
      [4, 4],
      [8, 2],
    ] as const) {
      for (const key of uuids) expect(sendLane(key, lanes)).toBe(kafkajsPartition(key, partitions) % lanes)
    }
  })
})
