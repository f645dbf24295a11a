export { advisoryLockKey, lockKeysInOrder } from './advisory-key.ts'
export { type BackgroundLoop, type BackgroundLoopOptions, backgroundLoop } from './background-loop.ts'
export {
  EmbeddedPostgresError,
  type EmbeddedPostgresOptions,
  type RunningPostgres,
  runningEmbeddedPostgres,
  startEmbeddedPostgres,
} from './embedded-postgres.ts'
export { startOrUseEmbeddedPostgres, useRunningEmbeddedPostgres } from './embedded-postgres-heir.ts'
export { orphanedEmbeddedPostgres, stopOrphanedEmbeddedPostgres } from './embedded-postgres-owner.ts'
export { passwordFileOf } from './embedded-postgres-password.ts'
export { freePort } from './free-port.ts'
export { type GroupCommitOptions, GroupCommitter, type GroupOutcome, type GroupWork } from './group-commit.ts'
export { DatabaseFromNewerVersionError, migrate, migrationsDir } from './migrate.ts'
export { withOrgScope } from './org-scope.ts'
export { createPool, type PoolOptions, withDatabase } from './pool.ts'
export type { PostgresBinaries } from './postgres-binaries.ts'
export { blockedOnTheWayTo, ensurePostgresUser, type SystemUser } from './postgres-user.ts'
export { publicSchemaOpenToAll } from './public-schema.ts'
export { ensureReaderLogin, READER_LOGIN, readerLoginUrl } from './reader-role.ts'
export { delay, type RetryOptions, type RetryPolicy, retry, retryDelayMs } from './retry.ts'
export {
  isRetryable,
  RetryableTransactionError,
  type TransactionOptions,
  withTransaction,
} from './transaction.ts'
export { isDatabaseUnavailable } from './unavailable.ts'
export { Waiter } from './waiter.ts'
