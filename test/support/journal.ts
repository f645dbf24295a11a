import type pg from 'pg'

export interface StoredEvent {
  type: string
  stream_id: string
  stream_version: number
  org_id: string
  chatbot_id: string
  payload: Record<string, unknown> & { messages?: { id: string }[] }
}

/** The journal's events (of a stream type, optionally one stream), in stream order. */
export async function journalEvents(
  pool: pg.Pool,
  streamType: string,
  streamId?: string,
): Promise<StoredEvent[]> {
  const { rows } = await pool.query<StoredEvent>(
    `SELECT type, stream_id, stream_version, org_id, chatbot_id, payload FROM event_journal
      WHERE stream_type = $1 AND ($2::uuid IS NULL OR stream_id = $2) ORDER BY stream_id, stream_version`,
    [streamType, streamId ?? null],
  )
  return rows
}

export async function countRows(pool: pg.Pool, table: string): Promise<number> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`not a table name: ${table}`)
  const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)
  return rows[0]!.n
}
