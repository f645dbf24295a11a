/**
 * What the fault tests assert at the end: the read models hold exactly what the capture API acknowledged,
 * each conversation event was applied once and in stream order, and nothing is left to consume.
 */
import type pg from 'pg'
import { expect } from 'vitest'
import type { CaptureLoad } from './load.ts'

/**
 * Records every write the projector makes to rm_conversations, in the order it makes them (a trigger of
 * the test's own, on the test's own database): the stream version before and after, and the messages it
 * counted. The projector writes a conversation's row once per batch, for all of the batch's events of it,
 * setting stream_version to the last one's; writes to one row are serialized by its lock, and a
 * rolled-back batch (a killed projector) takes its audit rows with it. So a write that counts messages
 * must move the version forward (one that does not applied events again, or older ones after newer), and
 * the last write leaves the write side's version (none of the last events lost). A lost event before the
 * last shows in the messages and metadata, which expectReadModelsEqualAcknowledged compares too.
 */
export async function installApplyAudit(pool: pg.Pool): Promise<void> {
  await pool.query(`
    CREATE TABLE fault_apply_audit (seq bigserial PRIMARY KEY, conversation_id uuid NOT NULL, version_before int NOT NULL,
                                    version int NOT NULL, messages int NOT NULL);
    CREATE FUNCTION fault_apply_audit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO fault_apply_audit (conversation_id, version_before, version, messages)
      VALUES (NEW.id, CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.stream_version END, NEW.stream_version,
              NEW.message_count - CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.message_count END);
      RETURN NEW;
    END $$;
    CREATE TRIGGER fault_apply_audit AFTER INSERT OR UPDATE ON rm_conversations
      FOR EACH ROW EXECUTE FUNCTION fault_apply_audit();`)
}

/**
 * Conversations whose writes applied events again or out of order (messages counted without the version
 * moving forward), or whose last write does not leave the write side's version.
 */
export async function auditViolations(pool: pg.Pool): Promise<unknown[]> {
  const { rows } = await pool.query(`
    WITH applied AS (
      SELECT conversation_id,
             array_agg(ARRAY[version_before, version, messages] ORDER BY seq) AS writes,
             (array_agg(version ORDER BY seq DESC))[1] AS last_version,
             bool_or(messages <> 0 AND version <= version_before) AS repeated
        FROM fault_apply_audit GROUP BY conversation_id)
    SELECT s.stream_id, s.version AS written, a.writes AS applied
      FROM event_streams s LEFT JOIN applied a ON a.conversation_id = s.stream_id
     WHERE s.stream_type = 'conversation'
       AND (a.last_version IS DISTINCT FROM s.version OR a.repeated)
     LIMIT 5`)
  return rows
}

export interface ProjectionTotals {
  messages: number
  counted: number
  rolledUp: number
  conversations: number
}

export async function projectionTotals(pool: pg.Pool): Promise<ProjectionTotals> {
  const { rows } = await pool.query<ProjectionTotals>(
    `SELECT (SELECT count(*)::int FROM rm_messages) AS messages,
            (SELECT coalesce(sum(message_count), 0)::int FROM rm_conversations) AS counted,
            (SELECT coalesce(sum(messages), 0)::int FROM rm_hourly_stats) AS "rolledUp",
            (SELECT count(*)::int FROM rm_conversations) AS conversations`,
  )
  return rows[0]!
}

/**
 * The read models equal what the load acknowledged: the same messages of the same conversations (no
 * more, no fewer), each conversation's count and its latest metadata, the hourly rollups adding up,
 * and every conversation event applied once, in order.
 */
export async function expectReadModelsEqualAcknowledged(pool: pg.Pool, load: CaptureLoad): Promise<void> {
  const { rows: messages } = await pool.query<{ external_id: string; message_id: string }>(
    `SELECT c.external_id, m.message_id FROM rm_messages m JOIN rm_conversations c ON c.id = m.conversation_id`,
  )
  const projected = new Map<string, string[]>()
  for (const m of messages) {
    const list = projected.get(m.external_id) ?? []
    projected.set(m.external_id, list)
    list.push(m.message_id)
  }
  const sorted = (map: Map<string, string[]>) =>
    Object.fromEntries([...map].map(([k, v]) => [k, [...v].sort()]).sort(([a], [b]) => (a! < b! ? -1 : 1)))
  const total = load.acknowledgedCount()
  expect(messages.length, 'messages in rm_messages vs acknowledged').toBe(total)
  expect(sorted(projected)).toEqual(sorted(load.acknowledged))

  const { rows: conversations } = await pool.query<{
    external_id: string
    message_count: number
    plan: string
  }>(`SELECT external_id, message_count, end_user ->> 'plan' AS plan FROM rm_conversations`)
  expect(conversations).toHaveLength(load.acknowledged.size)
  for (const c of conversations) {
    expect(c.message_count, `message_count of ${c.external_id}`).toBe(
      load.acknowledged.get(c.external_id)?.length,
    )
    expect(c.plan, `latest metadata of ${c.external_id}`).toBe(load.lastPlan.get(c.external_id))
  }
  expect(await projectionTotals(pool)).toEqual({
    messages: total,
    counted: total,
    rolledUp: total,
    conversations: load.acknowledged.size,
  })
  expect(await auditViolations(pool), 'conversation events applied once each, in stream order').toEqual([])
}

/** Events in the journal not yet published by the relay (0 once it has caught up). */
export async function relayLag(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM event_journal
      WHERE position > coalesce((SELECT last_offset FROM consumer_checkpoints
                                  WHERE group_id = '$relay' AND topic = '$journal' AND partition = 0), 0)`,
  )
  return rows[0]!.n
}
