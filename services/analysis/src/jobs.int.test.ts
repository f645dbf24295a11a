/**
 * A conversation's analysis jobs are claimed in the order they were queued, each once the one before it
 * is done or dead-lettered: a capture's first message is analysed with the stored conversation before it
 * (topics/answers.ts), so the job of the bot's turn must be stored before the job of the answer after it.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { claimJobs, completeJobs, deadLetterJob, enqueueJobs, retryJob } from './jobs.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

// Longer than the test's clock moves: no lease runs out.
const LEASE_MS = 600_000

it("claims a conversation's jobs one at a time, in the order they were queued; other conversations' alongside", async () => {
  const now = new Date('2026-11-30T08:00:00Z')
  const chatbotId = randomUUID()
  const orgId = randomUUID()
  const [first, second] = [randomUUID(), randomUUID()]
  const job = (conversationId: string, content: string) => ({
    sourceEventId: randomUUID(),
    conversationId,
    orgId,
    chatbotId,
    messages: [{ id: content, role: 'user' as const, content }],
  })
  // Given: the bot's turn and the answer after it, each its own capture; another conversation's capture.
  await enqueueJobs(db.pool, [job(first, 'turn'), job(first, 'answer'), job(second, 'other')], now)
  const contents = (jobs: { messages: readonly { content: string }[] }[]) =>
    jobs.map((j) => j.messages[0]!.content).sort()

  // When claimed: the answer waits for the turn; the other conversation does not.
  const claimed = await claimJobs(db.pool, 10, LEASE_MS, now)
  expect(contents(claimed)).toEqual(['other', 'turn'])
  // Still running: nothing more to claim.
  expect(await claimJobs(db.pool, 10, LEASE_MS, now)).toEqual([])
  // The turn waits for a retry: so does the answer.
  const turn = claimed.find((j) => j.messages[0]!.content === 'turn')!
  await retryJob(db.pool, turn, 'provider_error', new Date(now.getTime() + 60_000), now)
  expect(await claimJobs(db.pool, 10, LEASE_MS, now)).toEqual([])
  // Due again: the turn alone; done, then the answer.
  const later = new Date(now.getTime() + 61_000)
  const again = await claimJobs(db.pool, 10, LEASE_MS, later)
  expect(contents(again)).toEqual(['turn'])
  await completeJobs(db.pool, [again[0]!.id], later)
  expect(contents(await claimJobs(db.pool, 10, LEASE_MS, later))).toEqual(['answer'])
})

it('claims the next job of a conversation once the one before it is dead-lettered', async () => {
  const now = new Date('2026-11-30T08:00:00Z')
  const conversationId = randomUUID()
  const base = { orgId: randomUUID(), chatbotId: randomUUID(), conversationId }
  await enqueueJobs(
    db.pool,
    ['fails', 'next'].map((content) => ({
      ...base,
      sourceEventId: randomUUID(),
      messages: [{ id: content, role: 'user' as const, content }],
    })),
    now,
  )
  const [failing] = (await claimJobs(db.pool, 10, LEASE_MS, now)).filter(
    (j) => j.conversationId === conversationId,
  )
  expect(failing!.messages[0]!.content).toBe('fails')
  const client = await db.pool.connect()
  try {
    await deadLetterJob(client, failing!, 'invalid_input: no text', now)
  } finally {
    client.release()
  }
  const next = (await claimJobs(db.pool, 10, LEASE_MS, now)).filter(
    (j) => j.conversationId === conversationId,
  )
  expect(next.map((j) => j.messages[0]!.content)).toEqual(['next'])
})
