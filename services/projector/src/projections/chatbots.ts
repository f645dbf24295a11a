import type pg from 'pg'
import { type ChatbotChange, type ChatbotChanges, foldChatbots } from './chatbot-fold.ts'

/**
 * The I/O of rm_chatbots: folds the batch's chatbot events (chatbot-fold.ts) and writes what the fold
 * returns with one statement per kind, reading nothing first. A row only moves forward: a change whose
 * stream version the row has already reached (the migration's copy of the gateway's table, a rebuild
 * that got there first) changes nothing.
 */
export async function writeChatbots(client: pg.ClientBase, batch: ChatbotChanges): Promise<void> {
  const { inserts, updates } = foldChatbots(batch.take())
  if (inserts.length > 0) {
    await client.query(
      `INSERT INTO rm_chatbots AS r (id, org_id, name, api_key_prefix, settings, created_at, stream_version)
       SELECT d.id, d.org_id, d.name, d.api_key_prefix, d.settings, d.created_at, d.stream_version
         FROM ${CHANGES} ORDER BY d.id
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, api_key_prefix = EXCLUDED.api_key_prefix,
         settings = EXCLUDED.settings, created_at = EXCLUDED.created_at, stream_version = EXCLUDED.stream_version
       WHERE r.stream_version < EXCLUDED.stream_version`,
      changeParams(inserts),
    )
  }
  if (updates.length > 0) {
    await client.query(
      `UPDATE rm_chatbots AS r SET
         name = coalesce(d.name, r.name),
         api_key_prefix = coalesce(d.api_key_prefix, r.api_key_prefix),
         settings = coalesce(d.settings, r.settings),
         stream_version = d.stream_version
         FROM ${CHANGES}
        WHERE r.id = d.id AND r.stream_version < d.stream_version`,
      changeParams(updates),
    )
  }
}

const CHANGES = `unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::jsonb[], $6::timestamptz[],
  $7::int[]) AS d(id, org_id, name, api_key_prefix, settings, created_at, stream_version)`

function changeParams(changes: readonly ChatbotChange[]): unknown[] {
  return [
    changes.map((c) => c.id),
    changes.map((c) => c.orgId),
    changes.map((c) => c.name ?? null),
    changes.map((c) => c.apiKeyPrefix ?? null),
    changes.map((c) => (c.settings === undefined ? null : JSON.stringify(c.settings))),
    changes.map((c) => c.createdAt ?? null),
    changes.map((c) => c.streamVersion),
  ]
}
