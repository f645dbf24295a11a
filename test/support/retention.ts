// The gateway runs its retention sweep on a timer (RETENTION_SWEEP_MINUTES, a minute at least); tests run
// one sweep when they choose. Reached by path: the gateway's package exports what production uses only.
export { sweepRetention } from '../../services/gateway/src/erasure/retention.ts'
