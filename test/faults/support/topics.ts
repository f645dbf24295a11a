import { randomBytes } from 'node:crypto'
import type { Admin, Kafka } from 'kafkajs'
import type pg from 'pg'

/**
 * Reads every message now in the topics (up to their current end offsets) and counts them by event id:
 * 1 per event, more where the relay published one again after a crash.
 */
export async function eventIdsInKafka(
  kafka: Kafka,
  admin: Admin,
  topics: string[],
  timeoutMs = 60_000,
): Promise<Map<string, number>> {
  const remaining = new Map<string, bigint>() // topic/partition → last offset still to read
  for (const topic of topics) {
    for (const p of await admin.fetchTopicOffsets(topic)) {
      if (BigInt(p.high) > BigInt(p.low)) remaining.set(`${topic}/${p.partition}`, BigInt(p.high) - 1n)
    }
  }
  const counts = new Map<string, number>()
  if (remaining.size === 0) return counts
  const consumer = kafka.consumer({
    groupId: `fault-reader-${randomBytes(4).toString('hex')}`,
    maxWaitTimeInMs: 100,
  })
  let finish = () => {}
  const finished = new Promise<void>((resolve) => {
    finish = resolve
  })
  await consumer.connect()
  try {
    await consumer.subscribe({ topics, fromBeginning: true })
    await consumer.run({
      eachBatch: async ({ batch }) => {
        const key = `${batch.topic}/${batch.partition}`
        for (const m of batch.messages) {
          const last = remaining.get(key)
          if (last === undefined || BigInt(m.offset) > last) continue
          const id = (JSON.parse(m.value!.toString()) as { id: string }).id
          counts.set(id, (counts.get(id) ?? 0) + 1)
          if (BigInt(m.offset) === last) remaining.delete(key)
        }
        if (remaining.size === 0) finish()
      },
    })
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      finished,
      new Promise((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new Error(`could not read the topics to their end: ${[...remaining.keys()].join(', ')}`)),
          timeoutMs,
        )
      }),
    ]).finally(() => clearTimeout(timer))
    return counts
  } finally {
    await consumer.disconnect()
  }
}

/** Every event id in the journal. */
export async function journalEventIds(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ event_id: string }>('SELECT event_id FROM event_journal')
  return rows.map((r) => r.event_id)
}

/** Journal events missing from Kafka, and how many extra copies Kafka holds (republished after crashes). */
export async function compareJournalWithKafka(pool: pg.Pool, kafka: Kafka, admin: Admin, topics: string[]) {
  const inKafka = await eventIdsInKafka(kafka, admin, topics)
  const journal = await journalEventIds(pool)
  const missing = journal.filter((id) => !inKafka.has(id))
  const extraCopies = [...inKafka.values()].reduce((sum, n) => sum + n - 1, 0)
  const inJournal = new Set(journal)
  const unknown = [...inKafka.keys()].filter((id) => !inJournal.has(id))
  return { journal: journal.length, missing, extraCopies, unknown }
}
