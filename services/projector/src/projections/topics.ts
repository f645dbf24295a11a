import { advisoryLockKey, lockKeysInOrder } from '@cas/db'
import { OTHER_TOPIC_ID, type RecordedEvent } from '@cas/events'
import type pg from 'pg'

export type TopicEvent =
  | RecordedEvent<'analysis.topic-discovered'>
  | RecordedEvent<'analysis.topic-relabeled'>
  | RecordedEvent<'analysis.topic-merged'>
  | RecordedEvent<'analysis.topic-split'>
  | RecordedEvent<'analysis.topic-retired'>
  | RecordedEvent<'analysis.themes-assigned'>
  | RecordedEvent<'analysis.topic-renamed-by-user'>
  | RecordedEvent<'analysis.topic-hidden'>
  | RecordedEvent<'analysis.topic-unhidden'>
  | RecordedEvent<'analysis.topic-merged-by-user'>
  | RecordedEvent<'analysis.topics-settling'>
  | RecordedEvent<'analysis.topics-reclustered'>
  | RecordedEvent<'analysis.topics-recluster-failed'>
  | RecordedEvent<'analysis.topic-created-by-user'>
  | RecordedEvent<'analysis.topic-command-handled'>

/** The first advisory-lock key of rm_topics' per-chatbot locks (the second: the chatbot's). */
const TOPICS_LOCK = advisoryLockKey('projector-rm-topics')

/**
 * Takes each chatbot's rm_topics lock, in one order (by key), before any of its topic rows: a chatbot's
 * topic events (its stream's partition) and the results naming its topics (its conversations' partitions)
 * are applied by batches that run at once, and each writes several of its topic rows, the first in event
 * order, the second in id order. Two such batches could each hold a row the other was about to write, a
 * deadlock Postgres breaks only after deadlock_timeout (1 s) by failing one of them, retried; under a burst
 * of analysis this cost DSTC11's bench:quality a third of its throughput (bench/FINDINGS.md). The topics'
 * flush is the only writer of rm_topics and takes these locks at the same point of every batch, after the
 * batch's partition locks (batch-order.ts); a chatbot's topic writes wait for each other instead.
 */
async function lockChatbotsTopics(client: pg.ClientBase, chatbotIds: readonly string[]): Promise<void> {
  await lockKeysInOrder(
    client,
    TOPICS_LOCK,
    chatbotIds.map((id) => advisoryLockKey(`rm_topics:${id}`)),
  )
}

/**
 * rm_topics: each chatbot's topics by id, with their current label and keywords, the topic a merged
 * one now counts in (canonical_id), and their lineage from re-clustering: the topic a split-off one came
 * from (split_from) and when a topic was retired (retired_at). Topic events are few (a topic is found, relabeled or merged now and
 * then), so they are applied one statement each, in order. A merge moves every topic counting in the
 * merged one, so a chain of merges ends in one canonical topic. rm_themes: each chatbot's themes, replaced
 * whole by each analysis.themes-assigned (in its order: position). An owner's or admin's rename pins the
 * label (pinned), hide and unhide set hidden, and a merge by hand moves topics as a merge does and pins
 * the topic they now count in. rm_topic_reclustering: whether each chatbot's topics are settling
 * (analysis.topics-settling) and when they were last re-clustered (analysis.topics-reclustered).
 * rm_topic_commands: the chatbot-stream version of the last topic command the analysis handled
 * (analysis.topic-command-handled), written in the transaction that applies the events it produced, so
 * that rm_topics and it always agree on which commands the topics hold (the gateway folds the later ones).
 */
export class TopicChanges {
  private readonly pending: TopicEvent[] = []
  private readonly named = new Map<
    string,
    { org_id: string; chatbot_id: string; id: string; label: string; at: string }
  >()

  add(event: TopicEvent): void {
    this.pending.push(event)
  }

  /**
   * The topics a result names. A result can arrive before its topic's analysis.topic-discovered (that
   * travels on the chatbot's stream, the result on the conversation's): a row with the result's label
   * stands in until it does, so the topic never shows as a bare id. Key phrases (id = label) and "other"
   * have no row.
   */
  addNamed(
    event: { orgId: string; chatbotId: string; occurredAt: string },
    topics: readonly { id: string; label: string }[],
  ) {
    for (const t of topics) {
      if (t.id === t.label || t.id === OTHER_TOPIC_ID) continue
      const key = `${event.chatbotId}|${t.id}`
      if (!this.named.has(key)) {
        this.named.set(key, {
          org_id: event.orgId,
          chatbot_id: event.chatbotId,
          id: t.id,
          label: t.label,
          at: event.occurredAt,
        })
      }
    }
  }

  async flush(client: pg.ClientBase): Promise<void> {
    // Only the named topics without a row need a stand-in, and only they need the lock: a row committed
    // is never deleted, and the stand-in's insert would leave it as it is. Most results name topics
    // found long before, so most results' batches take no lock and wait for no other batch (a chatbot's
    // batches queued on this lock for most of their statement time under a burst: bench/FINDINGS.md).
    // A row another batch is writing is not seen here (not committed): it stays, and waits as before.
    await this.dropNamedWithRows(client)
    await lockChatbotsTopics(client, [
      ...this.pending.map((e) => e.chatbotId),
      ...[...this.named.values()].map((r) => r.chatbot_id),
    ])
    await this.flushEvents(client)
    if (this.named.size === 0) return
    const rows = [...this.named.values()].sort((a, b) => (a.chatbot_id + a.id < b.chatbot_id + b.id ? -1 : 1))
    this.named.clear()
    // A topic already there (found, relabeled, merged) keeps what its own events say.
    await client.query(
      `INSERT INTO rm_topics (org_id, chatbot_id, id, label, keywords, configured, canonical_id, discovered_at, updated_at)
       SELECT d.org_id, d.chatbot_id, d.id, d.label, '{}', false, d.id, d.at, d.at
         FROM json_to_recordset($1::json) AS d(org_id uuid, chatbot_id uuid, id text, label text, at timestamptz)
       ON CONFLICT (chatbot_id, id) DO NOTHING`,
      [JSON.stringify(rows)],
    )
  }

  /** Forgets the named topics whose rows are there already. */
  private async dropNamedWithRows(client: pg.ClientBase): Promise<void> {
    if (this.named.size === 0) return
    const named = [...this.named.values()]
    const { rows } = await client.query<{ chatbot_id: string; id: string }>(
      `SELECT t.chatbot_id, t.id FROM rm_topics t
         JOIN unnest($1::uuid[], $2::text[]) AS n(chatbot_id, id) ON t.chatbot_id = n.chatbot_id AND t.id = n.id`,
      [named.map((r) => r.chatbot_id), named.map((r) => r.id)],
    )
    for (const r of rows) this.named.delete(`${r.chatbot_id}|${r.id}`)
  }

  private async flushEvents(client: pg.ClientBase): Promise<void> {
    for (const e of this.pending.splice(0)) {
      switch (e.type) {
        case 'analysis.topic-discovered':
          await client.query(
            `INSERT INTO rm_topics (org_id, chatbot_id, id, label, keywords, configured, canonical_id, discovered_at,
               updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $3, $7, $7)
             ON CONFLICT (chatbot_id, id) DO UPDATE SET label = EXCLUDED.label, keywords = EXCLUDED.keywords,
               configured = EXCLUDED.configured, updated_at = EXCLUDED.updated_at`,
            [
              e.orgId,
              e.chatbotId,
              e.payload.topicId,
              e.payload.label,
              e.payload.keywords,
              e.payload.configured,
              e.occurredAt,
            ],
          )
          break
        case 'analysis.topic-relabeled':
          await client.query(
            'UPDATE rm_topics SET label = $3, keywords = $4, updated_at = $5 WHERE chatbot_id = $1 AND id = $2',
            [e.chatbotId, e.payload.topicId, e.payload.label, e.payload.keywords, e.occurredAt],
          )
          break
        case 'analysis.topic-renamed-by-user':
          await client.query(
            'UPDATE rm_topics SET label = $3, pinned = true, updated_at = $4 WHERE chatbot_id = $1 AND id = $2',
            [e.chatbotId, e.payload.topicId, e.payload.label, e.occurredAt],
          )
          break
        case 'analysis.topic-hidden':
        case 'analysis.topic-unhidden':
          await client.query(
            'UPDATE rm_topics SET hidden = $3, updated_at = $4 WHERE chatbot_id = $1 AND id = $2',
            [e.chatbotId, e.payload.topicId, e.type === 'analysis.topic-hidden', e.occurredAt],
          )
          break
        case 'analysis.topic-merged-by-user':
          await client.query(
            'UPDATE rm_topics SET pinned = true, updated_at = $3 WHERE chatbot_id = $1 AND id = $2',
            [e.chatbotId, e.payload.into, e.occurredAt],
          )
          await client.query(
            'UPDATE rm_topics SET canonical_id = $3, updated_at = $4 WHERE chatbot_id = $1 AND canonical_id = $2',
            [e.chatbotId, e.payload.topicId, e.payload.into, e.occurredAt],
          )
          break
        case 'analysis.topic-merged':
          await client.query(
            'UPDATE rm_topics SET canonical_id = $3, updated_at = $4 WHERE chatbot_id = $1 AND canonical_id = $2',
            [e.chatbotId, e.payload.topicId, e.payload.into, e.occurredAt],
          )
          break
        case 'analysis.topic-split':
          await client.query(
            `UPDATE rm_topics SET split_from = $2, updated_at = $4
              WHERE chatbot_id = $1 AND id = ANY($3::text[])`,
            [e.chatbotId, e.payload.topicId, e.payload.into, e.occurredAt],
          )
          break
        case 'analysis.topic-retired':
          await client.query(
            'UPDATE rm_topics SET retired_at = $3, updated_at = $3 WHERE chatbot_id = $1 AND id = $2',
            [e.chatbotId, e.payload.topicId, e.occurredAt],
          )
          break
        case 'analysis.topic-created-by-user':
          await client.query(
            `INSERT INTO rm_topics (org_id, chatbot_id, id, label, keywords, configured, canonical_id, discovered_at,
               updated_at, pinned)
             VALUES ($1, $2, $3, $4, $5, false, $3, $6, $6, true)
             ON CONFLICT (chatbot_id, id) DO UPDATE SET label = EXCLUDED.label, keywords = EXCLUDED.keywords,
               pinned = true, updated_at = EXCLUDED.updated_at`,
            [e.orgId, e.chatbotId, e.payload.topicId, e.payload.label, e.payload.keywords, e.occurredAt],
          )
          break
        case 'analysis.topics-settling':
          await client.query(
            `INSERT INTO rm_topic_reclustering (org_id, chatbot_id, settling, settling_since, updated_at)
             VALUES ($1, $2, true, $3, $4)
             ON CONFLICT (chatbot_id) DO UPDATE SET settling = true, settling_since = EXCLUDED.settling_since,
               updated_at = EXCLUDED.updated_at`,
            [e.orgId, e.chatbotId, e.payload.since, e.occurredAt],
          )
          break
        case 'analysis.topics-reclustered':
          await client.query(
            `INSERT INTO rm_topic_reclustering (org_id, chatbot_id, settling, settling_since, last_reclustered_at,
               updated_at)
             VALUES ($1, $2, $3, CASE WHEN $3 THEN $4::timestamptz END, $4, $5)
             ON CONFLICT (chatbot_id) DO UPDATE SET settling = EXCLUDED.settling,
               settling_since = EXCLUDED.settling_since, last_reclustered_at = EXCLUDED.last_reclustered_at,
               failed_attempts = 0, next_attempt_at = NULL, updated_at = EXCLUDED.updated_at`,
            [e.orgId, e.chatbotId, e.payload.settling, e.payload.reclusteredAt, e.occurredAt],
          )
          break
        case 'analysis.topics-recluster-failed':
          // A failed run: the requests it was to cluster still wait (settling), retried at next_attempt_at.
          await client.query(
            `INSERT INTO rm_topic_reclustering (org_id, chatbot_id, settling, settling_since, failed_attempts,
               next_attempt_at, updated_at)
             VALUES ($1, $2, true, $5, $3, $4, $5)
             ON CONFLICT (chatbot_id) DO UPDATE SET settling = true,
               settling_since = coalesce(rm_topic_reclustering.settling_since, EXCLUDED.settling_since),
               failed_attempts = EXCLUDED.failed_attempts, next_attempt_at = EXCLUDED.next_attempt_at,
               updated_at = EXCLUDED.updated_at`,
            [e.orgId, e.chatbotId, e.payload.attempt, e.payload.nextAttemptAt, e.occurredAt],
          )
          break
        case 'analysis.topic-command-handled':
          await client.query(
            `INSERT INTO rm_topic_commands (org_id, chatbot_id, last_command_version, updated_at)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (chatbot_id) DO UPDATE SET
               last_command_version = GREATEST(rm_topic_commands.last_command_version, EXCLUDED.last_command_version),
               updated_at = EXCLUDED.updated_at`,
            [e.orgId, e.chatbotId, e.payload.commandStreamVersion, e.occurredAt],
          )
          break
        case 'analysis.themes-assigned':
          await client.query('DELETE FROM rm_themes WHERE chatbot_id = $1', [e.chatbotId])
          await client.query(
            `INSERT INTO rm_themes (org_id, chatbot_id, id, label, topic_ids, position, updated_at)
             SELECT $1, $2, d.id, d.label, d.topic_ids, d.position, $4
               FROM json_to_recordset($3::json) AS d(id text, label text, topic_ids text[], position int)`,
            [
              e.orgId,
              e.chatbotId,
              JSON.stringify(
                e.payload.themes.map((t, position) => ({
                  id: t.themeId,
                  label: t.label,
                  topic_ids: t.topicIds,
                  position,
                })),
              ),
              e.occurredAt,
            ],
          )
          break
        default: {
          const unhandled: never = e
          throw new Error(`unhandled topic event ${JSON.stringify(unhandled)}`)
        }
      }
    }
  }
}
