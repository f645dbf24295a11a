import { randomUUID } from 'node:crypto'
import { backgroundLoop, withTransaction } from '@cas/db'
import { retentionDaysSql } from '@cas/settings'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type pg from 'pg'
import { eraseConversations } from './erase.ts'

const BATCH = 200

/**
 * Erases the conversations whose last message is older than their chatbot's settings.retentionDays.
 * Returns how many it erased. Batches are small transactions, so captures are never held up for long.
 */
export async function sweepRetention(
  pool: pg.Pool,
  now: () => Date,
  /** Tracing metadata for the conversation.erased events (the sweep's correlation id). */
  trace?: Readonly<Record<string, string>>,
): Promise<number> {
  const { rows: chatbots } = await pool.query<{ id: string; days: number }>(
    `SELECT id, days FROM (SELECT id, ${retentionDaysSql('settings')} AS days FROM chatbots) c
      WHERE days IS NOT NULL`,
  )
  let erased = 0
  for (const chatbot of chatbots) {
    const cutoff = new Date(now().getTime() - chatbot.days * 86_400_000)
    for (;;) {
      const n = await withTransaction(pool, async (client) => {
        const erasedNow = await eraseConversations(
          client,
          {
            sql: `id IN (SELECT id FROM capture_conversations WHERE chatbot_id = $1 AND last_message_at < $2
                          ORDER BY last_message_at LIMIT ${BATCH})`,
            params: [chatbot.id, cutoff],
          },
          'retention',
          now,
          trace,
        )
        return erasedNow.length
      })
      erased += n
      if (n < BATCH) break
    }
  }
  return erased
}

/** Runs the retention sweep every `intervalMs` while the app is up. */
export function startRetentionSweeper(
  app: FastifyInstance,
  deps: {
    pool: pg.Pool
    now: () => Date
    intervalMs: number
    log?: Pick<FastifyBaseLogger, 'info' | 'error'>
  },
): void {
  const loop = backgroundLoop({
    intervalMs: deps.intervalMs,
    firstRunAfterInterval: true,
    // Housekeeping must never keep a process alive on its own.
    unref: true,
    run: async () => {
      // One correlation id per sweep: its events, and its log lines, can be followed together.
      const sweepId = randomUUID()
      try {
        const erased = await sweepRetention(deps.pool, deps.now, {
          correlationId: sweepId,
          causationId: sweepId,
        })
        if (erased > 0)
          deps.log?.info({ correlationId: sweepId, erased }, 'retention sweep erased conversations')
      } catch (err) {
        deps.log?.error({ err, correlationId: sweepId }, 'retention sweep failed; trying again later')
      }
    },
  })
  loop.start()
  app.addHook('onClose', () => loop.stop())
}
