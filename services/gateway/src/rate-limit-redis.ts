import type { FastifyBaseLogger } from 'fastify'
import { Redis } from 'ioredis'

/**
 * How long a rate-limit command may wait for Redis: past it the limit is skipped for that request
 * (the rate-limit plugins' `skipOnError`), so a Redis that hangs (paused, partitioned) holds no request up.
 */
const COMMAND_TIMEOUT_MS = 500
/** How long start-up waits for the first connection before serving without it. */
const FIRST_CONNECTION_MS = 2_000

/**
 * The shared rate-limit counters' connection (REDIS_URL). A store that is down or hung must not take
 * capture or sign-in down with it: commands are neither queued while disconnected (the default offline
 * queue held every request until a reconnection) nor waited for past COMMAND_TIMEOUT_MS, and the limits
 * are not enforced until Redis answers again. An outage is one `warn` line, its end one `info` line,
 * instead of ioredis's "Unhandled error event" on stderr at every reconnection attempt.
 */
export async function openRateLimitRedis(url: string, log: FastifyBaseLogger): Promise<Redis> {
  const redis = new Redis(url, {
    connectTimeout: FIRST_CONNECTION_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  })
  let unreachable = false
  redis.on('error', (err: Error) => {
    if (unreachable) return
    unreachable = true
    log.warn(
      { err: err.message },
      'Redis (REDIS_URL) unreachable: rate limits are not enforced until it is back',
    )
  })
  redis.on('ready', () => {
    if (!unreachable) return
    unreachable = false
    log.info('Redis (REDIS_URL) reachable again: rate limits are shared again')
  })
  // Without an offline queue the first requests would pass unlimited until the connection is up.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, FIRST_CONNECTION_MS)
    const done = () => {
      clearTimeout(timer)
      resolve()
    }
    redis.once('ready', done)
    redis.once('error', done)
  })
  return redis
}
