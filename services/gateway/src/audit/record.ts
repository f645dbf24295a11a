import { isUuid } from '@cas/views'
import type pg from 'pg'
import type { AuditEntry } from './entries.ts'

/**
 * Writes audit entries in the caller's transaction, the one that appended their events, with the actor's
 * email and name as they are now (the log keeps them if the person later changes or leaves).
 */
export async function recordAudit(client: pg.ClientBase, entries: readonly AuditEntry[]): Promise<void> {
  if (entries.length === 0) return
  await client.query(
    `INSERT INTO audit_log (event_id, org_id, position, occurred_at, action, actor_id, actor_email, actor_name,
                            target_type, target_id, target_name, details)
     SELECT e.event_id, e.org_id, e.position, e.occurred_at, e.action, e.actor_id, u.email, u.name,
            e.target_type, e.target_id, e.target_name, e.details
       FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::timestamptz[], $5::text[], $6::uuid[], $7::text[],
                   $8::text[], $9::text[], $10::jsonb[])
            AS e(event_id, org_id, position, occurred_at, action, actor_id, target_type, target_id, target_name,
                 details)
       LEFT JOIN users u ON u.id = e.actor_id`,
    [
      entries.map((e) => e.eventId),
      entries.map((e) => e.orgId),
      entries.map((e) => e.position),
      entries.map((e) => e.occurredAt),
      entries.map((e) => e.action),
      entries.map((e) => (e.actorId && isUuid(e.actorId) ? e.actorId : null)),
      entries.map((e) => e.target.type),
      entries.map((e) => e.target.id),
      entries.map((e) => e.target.name),
      entries.map((e) => JSON.stringify(e.details)),
    ],
  )
}

/**
 * What deleting a chatbot leaves of it in the audit log: who created, renamed, rotated, erased, managed the
 * topics of and deleted it, and when, under its id and name; not the settings it was given (free-form,
 * whatever the organization put there) nor the topic labels and example requests its topic commands named
 * (words of its end users' requests, often), which go with the rest of its data. A topic command's entry
 * keeps its topic ids.
 */
export async function scrubDeletedChatbot(client: pg.ClientBase, chatbotId: string): Promise<void> {
  await client.query(
    `UPDATE audit_log
        SET details = CASE WHEN action = 'chatbot.settings-changed' THEN '{}'::jsonb
                           ELSE details - 'label' - 'previousLabel' - 'examples' END
      WHERE target_type = 'chatbot' AND target_id = $1
        AND action IN ('chatbot.settings-changed', 'chatbot.topic-rename-requested',
                       'chatbot.topic-creation-requested')`,
    [chatbotId],
  )
}
