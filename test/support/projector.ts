import { EMBEDDED_EVENT_LOG } from '@cas/eventlog'
import { createProjector, PROJECTOR_GROUP, type Projector } from '@cas/service-projector'
import { type RebuildOptions, rebuildReadModels } from '@cas/service-projector/rebuild'
import type pg from 'pg'
import { expect } from 'vitest'
import { testKeyring } from './keyring.ts'
import { waitFor } from './wait.ts'

/**
 * Whether a group's journal checkpoints (the projector's by default) have passed every event now in the
 * journal: one checkpoint per virtual partition, each at or past the last position.
 */
export async function projectorCaughtUp(
  pool: pg.Pool,
  groupId = PROJECTOR_GROUP,
  partitions: number = EMBEDDED_EVENT_LOG.partitions,
): Promise<boolean> {
  const { rows } = await pool.query<{ caught_up: boolean }>(
    `SELECT count(*) >= $2 AND coalesce(min(last_offset), -1) >= (SELECT coalesce(max(position), 0) FROM event_journal)
              AS caught_up
       FROM consumer_checkpoints WHERE group_id = $1 AND topic = '$journal'`,
    [groupId, partitions],
  )
  return rows[0]!.caught_up
}

/** Runs a journal-backed projector until it has applied everything in the journal, then stops it. */
export async function projectAll(pool: pg.Pool): Promise<Projector> {
  const projector = createProjector({
    pool,
    keyring: testKeyring,
    eventLog: { ...EMBEDDED_EVENT_LOG, pollIntervalMs: 5 },
    logger: false,
  })
  await projector.consumer.start()
  try {
    await waitFor(() => projectorCaughtUp(pool), { what: 'the projector to catch up' })
  } finally {
    await projector.consumer.stop()
  }
  return projector
}

/**
 * Replays every read model from the journal into fresh tables (rebuildReadModels, as `npm run replay`)
 * with the live projector stopped, expects the swap and `snapshot` to read as `before` after it, then
 * starts the projector again.
 */
export async function expectReplayKeeps<T>(
  pool: pg.Pool,
  projector: Projector,
  snapshot: () => Promise<T>,
  before: T,
  eventLog: RebuildOptions['eventLog'] = EMBEDDED_EVENT_LOG,
): Promise<void> {
  await projector.consumer.stop()
  const result = await rebuildReadModels({
    pool,
    keyring: testKeyring,
    eventLog,
    liveGroupId: PROJECTOR_GROUP,
  })
  expect(result).toMatchObject({ swapped: true })
  expect(await snapshot()).toEqual(before)
  await projector.consumer.start()
}
