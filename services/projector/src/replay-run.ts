import type pg from 'pg'

/**
 * A rebuild that stopped because its run is no longer its to carry on: another process's rebuild abandoned
 * it (a newer version's, after a migration changed the read models' tables: rebuild.ts `startOrResume`)
 * or swapped it in, or started a run at the same moment as this one. Nothing was written after it.
 *
 * Its code makes the consumer's runner hold it for a failure retrying may cure (`isTransientError`), so a
 * batch that meets it is retried, never set aside as a dead letter of the run's group, until the rebuild
 * stops its consumers and throws it.
 */
export class RebuildStoppedError extends Error {
  readonly code = 'EREBUILDSTOPPED'
}

/**
 * Takes the run's row (`FOR SHARE` for a replay batch, `FOR UPDATE` for the swap) in the caller's
 * transaction, and throws RebuildStoppedError unless the run is still running. `abandon` and the swap
 * update that row, so they wait for a transaction holding it to commit, and a transaction that comes after
 * them finds the run ended and writes nothing. Without it, a batch of a run whose schema another rebuild
 * had dropped resolved its tables to `public` on the rebuild's search path and wrote the live tables.
 */
export async function holdRunningRun(
  client: pg.ClientBase,
  runId: string,
  lock: 'SHARE' | 'UPDATE',
): Promise<void> {
  const { rows } = await client.query<{ status: string }>(
    `SELECT status FROM replay_runs WHERE id = $1 FOR ${lock}`,
    [runId],
  )
  const status = rows[0]?.status
  if (status !== 'running') throw runEnded(runId, status)
}

/** Throws RebuildStoppedError if the run is no longer running (no lock: to explain a failure). */
export async function assertRunRunning(pool: pg.Pool, runId: string): Promise<void> {
  const { rows } = await pool.query<{ status: string }>('SELECT status FROM replay_runs WHERE id = $1', [
    runId,
  ])
  const status = rows[0]?.status
  if (status !== 'running') throw runEnded(runId, status)
}

function runEnded(runId: string, status: string | undefined): RebuildStoppedError {
  const by = status === 'done' ? 'swapped in by another rebuild' : 'abandoned by another rebuild'
  return new RebuildStoppedError(`rebuild ${runId} stopped: ${by}; nothing more applied`)
}
