import { metricSet } from '@cas/metrics'
import { Counter, Gauge, Histogram } from 'prom-client'

/** The gateway's capture metrics (docs/operations.md), fed by capture, OTLP ingestion and test conversations. */
export const CAPTURE_METRICS = metricSet('capture', ({ registers }) => ({
  messagesStored: new Counter({
    name: 'cas_capture_messages_stored_total',
    help: 'Messages stored by capture (new message ids).',
    registers,
  }),
  duplicatesDropped: new Counter({
    name: 'cas_capture_duplicate_messages_total',
    help: 'Messages sent to capture that were already stored (or repeated within one request), so not stored again.',
    registers,
  }),

  captureGroupSize: new Histogram({
    name: 'cas_capture_group_size',
    help: 'Captures committed per transaction (group commit of concurrent captures).',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers,
  }),
}))

/** The shared rate-limit store's (REDIS_URL) breaker (redis-breaker.ts); 0 throughout without REDIS_URL. */
export const RATE_LIMIT_METRICS = metricSet('rate-limit', ({ registers }) => ({
  redisBreakerOpen: new Gauge({
    name: 'cas_rate_limit_redis_breaker_open',
    help: 'Whether the rate limits skip Redis after consecutive timeouts (1), their limits not enforced, or use it (0).',
    registers,
  }),
  redisTimeouts: new Counter({
    name: 'cas_rate_limit_redis_timeouts_total',
    help: 'Rate-limit commands to Redis that timed out, each holding its request for the command timeout (0.5 s).',
    registers,
  }),
}))
