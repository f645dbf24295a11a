import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import type { NewEvent, TopicCommandEventType } from '@cas/events'
import type pg from 'pg'

/**
 * A rename as published before v2 (no previousLabel), as old streams hold it: readers upcast it to v2
 * with previousLabel null.
 */
export const renameRequestedV1 = (topicId: string, label: string) =>
  ({ type: 'chatbot.topic-rename-requested', version: 1, payload: { topicId, label } }) as const

/**
 * Commits a topic command straight to the chatbot's stream, as a gateway deciding on a stale view might
 * have committed it: no check against the topics, no actor, no audit entry. Returns its recorded event
 * (its id is the command's id, as a POST's `commandId`).
 */
export async function commitTopicCommand(
  pool: pg.Pool,
  { orgId, chatbotId }: { orgId: string; chatbotId: string },
  event: NewEvent<TopicCommandEventType> | ReturnType<typeof renameRequestedV1>,
) {
  return withTransaction(pool, async (client) => {
    const appended = await appendToStream(client, {
      streamType: 'chatbot',
      streamId: chatbotId,
      orgId,
      chatbotId,
      expectedVersion: 'any',
      events: [event],
    })
    return appended.records[0]!
  })
}
