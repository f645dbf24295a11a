export {
  type EmbeddedPostgresOptions,
  type RunningPostgres,
  startEmbeddedPostgres,
} from './embedded-postgres.ts'
export { freePort } from './free-port.ts'
export { migrate, migrationsDir } from './migrate.ts'
export { createPool, type PoolOptions, withDatabase } from './pool.ts'
export {
  isRetryable,
  RetryableTransactionError,
  type TransactionOptions,
  withTransaction,
} from './transaction.ts'
