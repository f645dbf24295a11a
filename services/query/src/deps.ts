import type pg from 'pg'

export interface QueryDeps {
  /** Connections as the read-only role confined by row-level security (see libs/db/src/reader-role.ts). */
  readonly readerPool: pg.Pool
  readonly now: () => Date
  /** How long a chatbot or conversation read waits for its read model to catch up with the write side (default 2 s). */
  readonly readYourWritesTimeoutMs?: number
}
