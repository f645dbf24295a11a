import { withTransaction } from '@cas/db'
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import { eraseConversations } from './erase.ts'

const BATCH = 200

/**
 * Erases the conversations whose last message is older than their chatbot's settings.retentionDays.
 * Returns how many it erased. Batches are small transactions, so captures are never held up for long.
 */
export async function sweepRetention(pool: pg.Pool, now: () => Date): Promise<number> {
  const { rows: chatbots } = await pool.query<{ id: string; days: number }>(
    `SELECT id, (settings ->> 'retentionDays')::int AS days FROM chatbots
      WHERE jsonb_typeof(settings -> 'retentionDays') = 'number'`,
  )
  let erased = 0
  for (const chatbot of chatbots) {
    const cutoff = new Date(now().getTime() - chatbot.days * 86_400_000)
    for (;;) {
      const n = await withTransaction(pool, (client) =>
        eraseConversations(
          client,
          {
            sql: `id IN (SELECT id FROM capture_conversations WHERE chatbot_id = $1 AND last_message_at < $2
                          ORDER BY last_message_at LIMIT ${BATCH})`,
            params: [chatbot.id, cutoff],
          },
          'retention',
          now,
        ),
      )
      erased += n
      if (n < BATCH) break
    }
  }
  return erased
}

/** Runs the retention sweep every `intervalMs` while the app is up. */
export function startRetentionSweeper(
  app: FastifyInstance,
  deps: { pool: pg.Pool; now: () => Date; intervalMs: number; log?: (msg: string, err: unknown) => void },
): void {
  let running: Promise<unknown> | undefined
  const timer = setInterval(() => {
    if (running) return
    running = sweepRetention(deps.pool, deps.now)
      .catch((err) => deps.log?.('retention sweep failed; trying again later', err))
      .finally(() => {
        running = undefined
      })
  }, deps.intervalMs)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await running
  })
}
