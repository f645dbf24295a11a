import type pg from 'pg'
import { type RetryPolicy, retry } from './retry.ts'

/** Postgres error codes after which the whole transaction may simply be run again. */
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01'])

/** An error raised inside a transaction that asks for the transaction to be run again from the start. */
export class RetryableTransactionError extends Error {
  readonly retryable = true
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'RetryableTransactionError'
  }
}

export function isRetryable(err: unknown): boolean {
  if (err instanceof RetryableTransactionError) return true
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && RETRYABLE_SQLSTATES.has(code)
}

export interface TransactionOptions {
  /** How many times to run the function again after a retryable failure (default 5). */
  retries?: number
  isolation?: 'read committed' | 'repeatable read' | 'serializable'
}

/** Transactions that lost a race are run again soon: 5 ms doubling, full jitter. */
const SERIALIZATION_RETRY: RetryPolicy = { baseMs: 5, maxMs: 1_000, jitter: 'full' }

/**
 * Runs `fn` inside BEGIN/COMMIT on one pooled connection, rolling back on any error and running it again
 * (with a short jittered backoff) when the failure is retryable: a serialization failure, a deadlock, or
 * an append that lost the per-stream ordering race (see journal.ts).
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
  opts: TransactionOptions = {},
): Promise<T> {
  return retry(
    { ...SERIALIZATION_RETRY, retries: opts.retries ?? 5 },
    async () => {
      const client = await pool.connect()
      let release: boolean | Error = false
      try {
        await client.query(opts.isolation ? `BEGIN ISOLATION LEVEL ${opts.isolation.toUpperCase()}` : 'BEGIN')
        const result = await fn(client)
        await client.query('COMMIT')
        return result
      } catch (err) {
        try {
          await client.query('ROLLBACK')
        } catch (rollbackErr) {
          // The connection is broken: destroy it rather than return it to the pool.
          release = rollbackErr as Error
        }
        throw err
      } finally {
        client.release(release)
      }
    },
    { retryable: isRetryable },
  )
}
