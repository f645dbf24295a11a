import type pg from 'pg'
import type { Keyring } from './keyring.ts'

/** A chatbot's data key as stored: wrapped by the master key, or destroyed (null) once it was deleted. */
export interface StoredDataKey {
  readonly wrapped_key: Buffer | null
  readonly master_key_id: string | null
}

/** A destroyed key: its chatbot was deleted and its sealed events can never be opened again. */
export const DESTROYED = 'destroyed' as const

/**
 * The chatbot's data key, created on first use. Concurrent first uses race on the insert; every one of
 * them then reads the winner's key.
 */
export async function dataKeyFor(
  client: pg.ClientBase | pg.Pool,
  keyring: Keyring,
  chatbotId: string,
  orgId: string,
): Promise<Buffer> {
  const fresh = keyring.newDataKey()
  const created = await client.query(
    `INSERT INTO chatbot_data_keys (chatbot_id, org_id, wrapped_key, master_key_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT (chatbot_id) DO NOTHING`,
    [chatbotId, orgId, keyring.wrap(fresh, chatbotId), keyring.masterKeyId],
  )
  if (created.rowCount === 1) return fresh
  // Another transaction's key (it committed, or ON CONFLICT would still be waiting): a new statement, so
  // a new snapshot under READ COMMITTED, sees it.
  const { rows } = await client.query<StoredDataKey>(
    'SELECT wrapped_key, master_key_id FROM chatbot_data_keys WHERE chatbot_id = $1',
    [chatbotId],
  )
  const key = unwrapStored(keyring, chatbotId, rows[0])
  if (key === DESTROYED || key === undefined)
    throw new Error(`the data key of chatbot ${chatbotId} is destroyed`)
  return key
}

/** Unwraps a stored key; undefined when there is none, DESTROYED when it was destroyed. */
export function unwrapStored(
  keyring: Keyring,
  chatbotId: string,
  stored: StoredDataKey | undefined,
): Buffer | typeof DESTROYED | undefined {
  if (!stored) return undefined
  if (stored.wrapped_key === null) return DESTROYED
  if (stored.master_key_id !== keyring.masterKeyId) {
    throw new Error(
      `the data key of chatbot ${chatbotId} was wrapped by master key ${stored.master_key_id}, but this ` +
        `process has master key ${keyring.masterKeyId}: every service must be given the same ENCRYPTION_MASTER_KEY`,
    )
  }
  return keyring.unwrap(stored.wrapped_key, chatbotId)
}

/**
 * Destroys the chatbot's data key (crypto-shredding): what was sealed with it, in the journal, in Kafka
 * or in anyone's copy of a topic, can never be opened again. A tombstone row stays, so that readers can
 * tell "deleted" from "never had a key" and skip even the chatbot's old unencrypted (v1) events.
 */
export async function destroyDataKey(
  client: pg.ClientBase | pg.Pool,
  chatbotId: string,
  orgId: string,
): Promise<void> {
  await client.query(
    `INSERT INTO chatbot_data_keys (chatbot_id, org_id, wrapped_key, master_key_id, destroyed_at)
     VALUES ($1, $2, NULL, NULL, now())
     ON CONFLICT (chatbot_id) DO UPDATE SET wrapped_key = NULL, master_key_id = NULL, destroyed_at = now()`,
    [chatbotId, orgId],
  )
}

/**
 * Of these chatbots, the deleted ones. A chatbot is deleted exactly when its data key is destroyed (in the
 * transaction that deletes it): the one sign of deletion every consumer reads, whatever it consumes.
 */
export async function chatbotsWithDestroyedKeys(
  client: pg.ClientBase | pg.Pool,
  chatbotIds: readonly string[],
): Promise<Set<string>> {
  if (chatbotIds.length === 0) return new Set()
  const { rows } = await client.query<{ chatbot_id: string }>(
    'SELECT chatbot_id FROM chatbot_data_keys WHERE chatbot_id = ANY($1::uuid[]) AND wrapped_key IS NULL',
    [[...new Set(chatbotIds)]],
  )
  return new Set(rows.map((r) => r.chatbot_id))
}

/** The data keys of some chatbots: unwrapped, DESTROYED, or absent when a chatbot never had one. */
export async function loadDataKeys(
  client: pg.ClientBase | pg.Pool,
  keyring: Keyring,
  chatbotIds: readonly string[],
): Promise<Map<string, Buffer | typeof DESTROYED>> {
  const keys = new Map<string, Buffer | typeof DESTROYED>()
  if (chatbotIds.length === 0) return keys
  const { rows } = await client.query<StoredDataKey & { chatbot_id: string }>(
    'SELECT chatbot_id, wrapped_key, master_key_id FROM chatbot_data_keys WHERE chatbot_id = ANY($1::uuid[])',
    [[...new Set(chatbotIds)]],
  )
  for (const row of rows) {
    const key = unwrapStored(keyring, row.chatbot_id, row)
    if (key !== undefined) keys.set(row.chatbot_id, key)
  }
  return keys
}
