// The plugin's own Redis store (its Lua script), which rate-limit-redis.ts puts behind the breaker; the
// package declares its store interface but not this module.
declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit'
  import type { Redis } from 'ioredis'

  const RedisStore: new (
    continueExceeding: boolean,
    exponentialBackoff: boolean,
    redis: Redis,
    key?: string,
  ) => FastifyRateLimitStore
  export default RedisStore
}
