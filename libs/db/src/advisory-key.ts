import type pg from 'pg'

/**
 * A stable non-negative int4 naming `text`, for the first key of a two-key advisory lock (FNV-1a of its
 * UTF-8 bytes). Each user names its locks with a prefix of its own, so that they never meet.
 */
export function advisoryLockKey(text: string): number {
  let h = 0x811c9dc5
  for (const ch of Buffer.from(text)) h = Math.imul(h ^ ch, 0x01000193)
  return (h >>> 0) & 0x7fffffff
}

/**
 * Takes the transaction-scoped advisory locks (`classKey`, k) for each of `keys`, once each, in ascending
 * order: every caller that locks a set of keys this way takes them in one order, so no two wait for each
 * other in a circle. Prepared once per connection.
 */
export async function lockKeysInOrder(
  client: pg.ClientBase,
  classKey: number,
  keys: readonly number[],
): Promise<void> {
  const ordered = [...new Set(keys)].sort((a, b) => a - b)
  if (ordered.length === 0) return
  await client.query({
    name: 'cas-advisory-locks-in-order',
    text: 'SELECT pg_advisory_xact_lock($1, k) FROM unnest($2::int[]) AS k',
    values: [classKey, ordered],
  })
}
