import type { RecordedEvent } from '@cas/events'
import type pg from 'pg'
import {
  type Barrier,
  type BarrierHooks,
  CHATBOT_ROW_TABLES,
  CHATBOT_TABLES,
  CONVERSATION_ROW_TABLES,
  CONVERSATION_TABLES,
  READ_MODELS,
  type ReadModel,
} from './registry.ts'
import type { RollupChanges } from './rollups.ts'

/**
 * The barriers (registry.ts BARRIERS), derived from what each read model declares for them, in four
 * steps: every model's `takeOut` (while the rows are there to read), the tables' `rows-deleted`, their
 * `row-deleted`, then every model's `remember` (the tombstones). Called after the batch so far is
 * written (apply.ts); the rollups' deltas they add are written with the rest of the batch.
 */
interface Derived<B extends Barrier> {
  readonly hooks: (model: ReadModel) => BarrierHooks<B> | undefined
  /** The tables of its rows (by `column`) and of its own row (by `id`), and the value both are keyed by. */
  readonly rows: readonly string[]
  readonly column: string
  readonly ownRow: readonly string[]
  readonly key: (event: RecordedEvent<B>) => string
}

const CHATBOT_DELETED: Derived<'chatbot.deleted'> = {
  hooks: (m) => m.onChatbotDeleted,
  rows: CHATBOT_TABLES,
  column: 'chatbot_id',
  ownRow: CHATBOT_ROW_TABLES,
  key: (e) => e.chatbotId,
}

const CONVERSATION_ERASED: Derived<'conversation.erased'> = {
  hooks: (m) => m.onErasure,
  rows: CONVERSATION_TABLES,
  column: 'conversation_id',
  ownRow: CONVERSATION_ROW_TABLES,
  key: (e) => e.streamId,
}

async function applyBarrier<B extends Barrier>(
  derived: Derived<B>,
  client: pg.ClientBase,
  event: RecordedEvent<B>,
  rollups: RollupChanges,
): Promise<void> {
  const models = READ_MODELS as readonly ReadModel[]
  for (const model of models) await derived.hooks(model)?.takeOut?.(client, event, rollups)
  const key = derived.key(event)
  for (const table of derived.rows)
    await client.query(`DELETE FROM ${table} WHERE ${derived.column} = $1`, [key])
  for (const table of derived.ownRow) await client.query(`DELETE FROM ${table} WHERE id = $1`, [key])
  for (const model of models) await derived.hooks(model)?.remember?.(client, event)
}

/**
 * A chatbot's deletion: taken out of its organization's rollups and end users' hours, every read-model
 * row of it deleted, and remembered so that late events never bring rows back.
 */
export function applyChatbotDeleted(
  client: pg.ClientBase,
  event: RecordedEvent<'chatbot.deleted'>,
  rollups: RollupChanges,
): Promise<void> {
  return applyBarrier(CHATBOT_DELETED, client, event, rollups)
}

/**
 * A conversation's erasure leaves no row behind: its messages taken back out of the hourly rollups, its
 * activity out of the distinct counts, its rows deleted, and a tombstone drops analysis results still on
 * their way. `rollups` must hold no pending delta of this conversation (the caller flushes).
 */
export function applyErased(
  client: pg.ClientBase,
  event: RecordedEvent<'conversation.erased'>,
  rollups: RollupChanges,
): Promise<void> {
  return applyBarrier(CONVERSATION_ERASED, client, event, rollups)
}
