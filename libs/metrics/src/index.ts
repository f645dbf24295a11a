export {
  type AnalysisSource,
  type ConsumerSource,
  Metrics,
  type PoolSource,
  type RelaySource,
} from './metrics.ts'
