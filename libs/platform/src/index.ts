export { type Infrastructure, observeInfrastructure, openInfrastructure } from './infrastructure.ts'
export { type Logger, type RunningService, runService } from './run-service.ts'
