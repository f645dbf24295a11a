export {
  type AnalysisSource,
  type ConsumerSource,
  Metrics,
  type PipelineSource,
  type PoolSource,
  type RelaySource,
} from './metrics.ts'
