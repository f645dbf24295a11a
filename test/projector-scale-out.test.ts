/**
 * Several projector processes in one consumer group split the partitions and together build exactly the
 * read models one projector would: in journal mode (virtual partitions) and Kafka mode.
 */
import type { EventLogBackend } from '@cas/eventlog'
import { createProjector, type Projector } from '@cas/service-projector'
import { afterEach, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import { uniqueGroupId } from './support/kafka.ts'
import { testKeyring } from './support/keyring.ts'
import { EVENT_LOG_MODES, startPipeline } from './support/pipeline.ts'
import { waitFor } from './support/wait.ts'

for (const mode of EVENT_LOG_MODES) {
  describe.skipIf(!mode.available)(`projector scale-out, ${mode.name} mode`, () => {
    const cleanups: (() => Promise<unknown>)[] = []
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
    })

    it('splits the partitions between two projectors and counts every message once', async () => {
      const pipeline = await startPipeline(mode.name, cleanups)
      const { db, app } = pipeline
      // Journal mode: four virtual partitions, so that the two projectors have something to split.
      const eventLog: EventLogBackend =
        pipeline.eventLog.kind === 'journal' ? { ...pipeline.eventLog, partitions: 4 } : pipeline.eventLog
      // One group for the two, of their own: test files share the Kafka cluster.
      const groupId = uniqueGroupId('projector')
      const projectors: Projector[] = [0, 1].map(() =>
        createProjector({ pool: db.pool, keyring: testKeyring, eventLog, logger: false, groupId }),
      )
      for (const p of projectors) {
        await p.consumer.start()
        cleanups.push(() => p.consumer.stop())
      }
      await waitFor(() => projectors.every((p) => p.consumer.stats.partitions.length > 0), {
        what: 'both projectors to own partitions',
      })

      const { cookie } = await signUp(app)
      const { apiKey } = await createChatbot(app, cookie)
      const captures = Array.from({ length: 40 }, (_, i) =>
        postCapture(app, apiKey, {
          conversationId: `conversation-${i % 20}`,
          messages: [
            { id: `${i}-a`, role: 'user', content: 'question', sentAt: '2026-11-20T10:00:00Z' },
            { id: `${i}-b`, role: 'assistant', content: 'answer', sentAt: '2026-11-20T10:00:01Z' },
          ],
        }),
      )
      expect((await Promise.all(captures)).every((r) => r.statusCode === 200)).toBe(true)

      const totals = async () => {
        const { rows } = await db.pool.query(
          `SELECT (SELECT count(*)::int FROM rm_messages) AS messages,
                  (SELECT coalesce(sum(message_count), 0)::int FROM rm_conversations) AS counted,
                  (SELECT coalesce(sum(messages), 0)::int FROM rm_hourly_stats) AS rolled_up,
                  (SELECT count(*)::int FROM rm_hourly_activity) AS active`,
        )
        return rows[0]
      }
      await waitFor(async () => (await totals()).messages === 80, { what: 'all 80 messages projected' })
      expect(await totals()).toEqual({ messages: 80, counted: 80, rolled_up: 80, active: 20 })
      expect(projectors.every((p) => p.stats.applied > 0)).toBe(true)
    })
  })
}
