import { Metrics } from '@cas/metrics'
import { describe, expect, it } from 'vitest'
import { CAPTURE_METRICS } from './metrics.ts'

describe("the gateway's capture metrics", () => {
  it('keeps the metrics of separate instances apart (one per app in a process)', async () => {
    const a = new Metrics()
    const b = new Metrics()
    a.use(CAPTURE_METRICS).messagesStored.inc(3)
    b.use(CAPTURE_METRICS)
    expect((await a.render()).body).toContain('cas_capture_messages_stored_total 3')
    expect((await b.render()).body).toContain('cas_capture_messages_stored_total 0')
  })
})
