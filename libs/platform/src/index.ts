export { cliFailureLine, databaseWhere, openCliInfrastructure } from './cli.ts'
export { type Composed, type ServiceModule, startComposed } from './compose.ts'
export {
  chooseDataDir,
  type DataDirChoice,
  type DataDirConfig,
  fallbackName,
  withChosenDataDir,
} from './data-dir.ts'
export { httpAppOptions } from './http-options.ts'
export { type Infrastructure, observeInfrastructure, openInfrastructure } from './infrastructure.ts'
export { cliLog, logOutput } from './log-output.ts'
export {
  deadLetterReadiness,
  journalConflictReadiness,
  observePipelineStatus,
  PIPELINE_METRICS,
  type PipelineSource,
  pipelineStatusReadiness,
} from './pipeline-status.ts'
export { type Logger, type RunningService, runService } from './run-service.ts'
export { startWorkerThread } from './worker-thread.ts'
