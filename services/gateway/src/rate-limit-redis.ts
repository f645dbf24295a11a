import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import RedisStore from '@fastify/rate-limit/store/RedisStore.js'
import type { FastifyBaseLogger } from 'fastify'
import { Redis } from 'ioredis'
import type { Counter, Gauge } from 'prom-client'
import { type BreakerPolicy, type Outcome, REDIS_BREAKER, RedisBreaker } from './redis-breaker.ts'

/**
 * How long a rate-limit command may wait for Redis: past it the limit is skipped for that request
 * (the rate-limit plugins' `skipOnError`), so a Redis that hangs (paused, partitioned) holds no request up
 * longer, and after a few such waits the breaker (redis-breaker.ts) stops asking it for a while.
 */
const COMMAND_TIMEOUT_MS = 500
/** How long start-up waits for the first connection before serving without it. */
const FIRST_CONNECTION_MS = 2_000
/** ioredis's error for a command past `commandTimeout`. */
const TIMED_OUT = 'Command timed out'

/** The shared rate-limit counters: the connection, and the breaker every command goes through. */
export interface RateLimitRedis {
  readonly redis: Redis
  readonly breaker: RedisBreaker
  /** A command waited COMMAND_TIMEOUT_MS for nothing (cas_rate_limit_redis_timeouts_total). */
  readonly countTimeout: () => void
}

export interface RateLimitRedisMetrics {
  readonly redisBreakerOpen: Pick<Gauge, 'set'>
  readonly redisTimeouts: Pick<Counter, 'inc'>
}

/**
 * The shared rate-limit counters' connection (REDIS_URL). A store that is down or hung must not take
 * capture or sign-in down with it: commands are neither queued while disconnected (the default offline
 * queue held every request until a reconnection) nor waited for past COMMAND_TIMEOUT_MS, nor sent at all
 * while the breaker is open, and the limits are not enforced until Redis answers again. An outage is one
 * `warn` line, its end one `info` line, instead of ioredis's "Unhandled error event" on stderr at every
 * reconnection attempt; a hang (the breaker) the same.
 */
export async function openRateLimitRedis(
  url: string,
  log: FastifyBaseLogger,
  metrics: RateLimitRedisMetrics,
  policy: BreakerPolicy = REDIS_BREAKER,
): Promise<RateLimitRedis> {
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
  const breaker = new RedisBreaker(policy, Date.now, {
    opened: () => {
      metrics.redisBreakerOpen.set(1)
      log.warn(
        { timeouts: policy.timeoutsToOpen, commandTimeoutMs: COMMAND_TIMEOUT_MS },
        'Redis (REDIS_URL) does not answer: rate limits skip it, and are not enforced, until a probe is answered',
      )
    },
    closed: () => {
      metrics.redisBreakerOpen.set(0)
      log.info('Redis (REDIS_URL) answers again: rate limits are shared again')
    },
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
  return { redis, breaker, countTimeout: () => metrics.redisTimeouts.inc() }
}

/**
 * A rate-limit plugin's store options: its counters in Redis under `nameSpace` through the breaker, or in
 * memory without REDIS_URL. A command the breaker holds back fails at once, and `skipOnError` lets the
 * request through unlimited, as after a timeout.
 */
export function rateLimitStore(
  shared: RateLimitRedis | undefined,
  nameSpace: string,
): { nameSpace: string; store?: FastifyRateLimitStoreCtor } {
  if (!shared) return { nameSpace }
  const { redis } = shared
  const breakerShared: RateLimitRedis = shared
  return {
    nameSpace,
    store: class extends BreakerStore {
      constructor(options: { continueExceeding?: boolean; exponentialBackoff?: boolean }) {
        super(
          new RedisStore(
            options.continueExceeding ?? false,
            options.exponentialBackoff ?? false,
            redis,
            nameSpace,
          ),
          breakerShared,
        )
      }
    },
  }
}

const SKIPPED = new Error('Redis (REDIS_URL) skipped: its breaker is open')

/** The plugin's Redis store, each command admitted by the breaker and its outcome reported to it. */
class BreakerStore implements FastifyRateLimitStore {
  constructor(
    private readonly inner: FastifyRateLimitStore,
    private readonly shared: RateLimitRedis,
  ) {}

  incr(...[key, callback, timeWindow, max]: Parameters<FastifyRateLimitStore['incr']>): void {
    const { breaker, countTimeout } = this.shared
    const permit = breaker.admit()
    if (!permit) {
      callback(SKIPPED)
      return
    }
    this.inner.incr(
      key,
      (error, result) => {
        const outcome: Outcome = !error ? 'answered' : error.message === TIMED_OUT ? 'timed-out' : 'failed'
        if (outcome === 'timed-out') countTimeout()
        breaker.report(permit, outcome)
        callback(error, result)
      },
      timeWindow,
      max,
    )
  }

  child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
    return new BreakerStore(this.inner.child(routeOptions), this.shared)
  }
}
