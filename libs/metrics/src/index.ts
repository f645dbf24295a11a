export {
  type ConsumerSource,
  type DeadLetterSource,
  type MetricScope,
  type MetricSet,
  Metrics,
  metricSet,
  type PoolSource,
} from './metrics.ts'
