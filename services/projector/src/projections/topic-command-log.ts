import type { RecordedEvent, TopicCommandEventType } from '@cas/events'
import type pg from 'pg'

export type TopicCommandLogEvent =
  | RecordedEvent<TopicCommandEventType>
  | RecordedEvent<'analysis.topic-command-handled'>

/** The command a request event is, as the read model and the API name it. */
export const COMMAND_TYPE_OF = {
  'chatbot.topic-rename-requested': 'rename',
  'chatbot.topic-hide-requested': 'hide',
  'chatbot.topic-unhide-requested': 'unhide',
  'chatbot.topic-merge-requested': 'merge',
  'chatbot.topic-creation-requested': 'create',
} as const satisfies Record<TopicCommandEventType, string>

interface Requested {
  command_id: string
  org_id: string
  chatbot_id: string
  version: number
  type: string
  topic_id: string
  into_topic_id: string | null
  label: string | null
  previous_label: string | null
  actor_id: string | null
  at: string
}

interface Handled {
  command_id: string
  org_id: string
  chatbot_id: string
  version: number
  type: string
  status: string
  reason: string | null
  /** An applied creation: the requests it moved (v2; null otherwise and for v1). */
  moved: number | null
  at: string
}

/**
 * rm_topic_command_log: what became of each topic command, one row per command event. The request (the
 * chatbot's stream) and its outcome (analysis.topic-command-handled, the chatbot's topic stream) are
 * consumed apart and may be applied in either order, or twice: each is an upsert of its own columns only.
 * The request fills what was asked (a rename: with the label the topic had then, previousLabel, null for
 * a v1 rename), by whom and when, and makes a new row pending; the outcome sets the status, and a row it
 * makes first holds the command's type and version until its request fills the rest.
 */
export class TopicCommandLogChanges {
  private readonly requested = new Map<string, Requested>()
  private readonly handled = new Map<string, Handled>()

  add(e: TopicCommandLogEvent): void {
    if (e.type === 'analysis.topic-command-handled') {
      const p = e.payload
      this.handled.set(p.commandEventId, {
        command_id: p.commandEventId,
        org_id: e.orgId,
        chatbot_id: e.chatbotId,
        version: p.commandStreamVersion,
        type: COMMAND_TYPE_OF[p.commandType],
        status: p.outcome,
        reason: p.reason ?? null,
        moved: p.moved,
        at: e.occurredAt,
      })
      return
    }
    const p = e.payload as { topicId: string; into?: string; label?: string; previousLabel?: string | null }
    this.requested.set(e.id, {
      command_id: e.id,
      org_id: e.orgId,
      chatbot_id: e.chatbotId,
      version: e.streamVersion,
      type: COMMAND_TYPE_OF[e.type],
      topic_id: p.topicId,
      into_topic_id: p.into ?? null,
      label: p.label ?? null,
      previous_label: p.previousLabel ?? null,
      actor_id: e.metadata?.actorId ?? null,
      at: e.occurredAt,
    })
  }

  async flush(client: pg.ClientBase): Promise<void> {
    // In id order, so that two batches writing the same rows (a request's and its outcome's) take their
    // locks in one order.
    const byId = (a: { command_id: string }, b: { command_id: string }) =>
      a.command_id < b.command_id ? -1 : 1
    const requested = [...this.requested.values()].sort(byId)
    const handled = [...this.handled.values()].sort(byId)
    this.requested.clear()
    this.handled.clear()
    if (requested.length > 0) {
      await client.query(
        `INSERT INTO rm_topic_command_log (command_id, org_id, chatbot_id, command_stream_version, type, topic_id,
           into_topic_id, label, previous_label, actor_id, requested_at, status)
         SELECT d.command_id, d.org_id, d.chatbot_id, d.version, d.type, d.topic_id, d.into_topic_id, d.label,
                d.previous_label, d.actor_id, d.at, 'pending'
           FROM json_to_recordset($1::json) AS d(command_id uuid, org_id uuid, chatbot_id uuid, version int,
                type text, topic_id text, into_topic_id text, label text, previous_label text, actor_id text,
                at timestamptz)
         ON CONFLICT (command_id) DO UPDATE SET topic_id = EXCLUDED.topic_id,
           into_topic_id = EXCLUDED.into_topic_id, label = EXCLUDED.label,
           previous_label = EXCLUDED.previous_label, actor_id = EXCLUDED.actor_id,
           requested_at = EXCLUDED.requested_at`,
        [JSON.stringify(requested)],
      )
    }
    if (handled.length > 0) {
      await client.query(
        `INSERT INTO rm_topic_command_log (command_id, org_id, chatbot_id, command_stream_version, type, status,
           reason, moved, handled_at)
         SELECT d.command_id, d.org_id, d.chatbot_id, d.version, d.type, d.status, d.reason, d.moved, d.at
           FROM json_to_recordset($1::json) AS d(command_id uuid, org_id uuid, chatbot_id uuid, version int,
                type text, status text, reason text, moved int, at timestamptz)
         ON CONFLICT (command_id) DO UPDATE SET status = EXCLUDED.status, reason = EXCLUDED.reason,
           moved = EXCLUDED.moved, handled_at = EXCLUDED.handled_at`,
        [JSON.stringify(handled)],
      )
    }
  }
}
