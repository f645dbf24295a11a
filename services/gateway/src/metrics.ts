import { metricSet } from '@cas/metrics'
import { Counter, Histogram } from 'prom-client'

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
