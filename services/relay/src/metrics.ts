import { metricSet } from '@cas/metrics'
import { Counter, Gauge } from 'prom-client'

/** The relay: its counters, and its lag (journal events waiting to be published). */
export interface RelaySource {
  readonly stats: {
    readonly published: number
    readonly byReference?: number
    readonly errors: number
    readonly isLeader: boolean
    readonly roleSince: string
  }
  lag(): Promise<number>
}

/** The relay's metrics (docs/operations.md): its counters, its lock, and the journal events it has not published. */
export const RELAY_METRICS = metricSet('relay', ({ registers, collect }) => {
  const relays: RelaySource[] = []
  new Gauge({
    name: 'cas_relay_lag_events',
    help: 'Journal events committed but not yet acknowledged by Kafka.',
    registers,
    async collect() {
      this.reset()
      for (const r of relays) {
        const lag = await collect('relay lag', () => r.lag())
        if (lag !== undefined) this.set(lag)
      }
    },
  })
  new Counter({
    name: 'cas_relay_published_events_total',
    help: 'Events published to Kafka and acknowledged.',
    registers,
    collect() {
      this.reset()
      for (const r of relays) this.inc(r.stats.published)
    },
  })
  new Counter({
    name: 'cas_relay_events_by_reference_total',
    help: 'Events Kafka kept refusing as records (too large), published by reference instead: the envelope, its payload read from the journal.',
    registers,
    collect() {
      this.reset()
      for (const r of relays) this.inc(r.stats.byReference ?? 0)
    },
  })
  new Counter({
    name: 'cas_relay_errors_total',
    help: 'Relay batches that failed and were retried.',
    registers,
    collect() {
      this.reset()
      for (const r of relays) this.inc(r.stats.errors)
    },
  })
  new Gauge({
    name: 'cas_relay_leader',
    help: '1 when this relay holds the publishing lock, 0 on standby.',
    registers,
    collect() {
      this.reset()
      for (const r of relays) this.set(r.stats.isLeader ? 1 : 0)
    },
  })
  new Gauge({
    name: 'cas_relay_role_since_timestamp_seconds',
    help: 'When this relay last began leading or standing by (Unix time): a leader that changes often shows here.',
    registers,
    collect() {
      this.reset()
      for (const r of relays) this.set(Date.parse(r.stats.roleSince) / 1000)
    },
  })
  return {
    observe(relay: RelaySource): void {
      relays.push(relay)
    },
  }
})
