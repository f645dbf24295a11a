import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import {
  appendToStream,
  lockStreamForUpdate,
  purgeChatbotEvents,
  readStream,
  StreamVersionConflictError,
} from '@cas/eventlog'
import { type ChatbotEvent, parseRecordedEvent } from '@cas/events'
import { AppError } from '@cas/http'
import { dataKeyFor, destroyDataKey, type Keyring } from '@cas/keyring'
import type pg from 'pg'
import { auditEntriesOf } from '../audit/entries.ts'
import { recordAudit, scrubDeletedChatbot } from '../audit/record.ts'
import type { IssuedKey } from './api-key.ts'
import { type ChatbotCommand, type ChatbotState, decide, evolve, initialChatbotState } from './chatbot.ts'
import { projectChatbot } from './projection.ts'

export interface CommandDeps {
  readonly pool: pg.Pool
  /** Wraps the data key a new chatbot gets for the personal data of its events. */
  readonly keyring: Keyring
  readonly now: () => Date
}

export interface CommandResult {
  readonly chatbotId: string
  readonly state: ChatbotState
}

// Commands on one chatbot take turns on its stream lock; the version check still guards the append (a
// stream created concurrently has nothing to lock yet), and a command that loses it decides again.
const CONFLICT_RETRIES = 5

/**
 * Runs one command on a chatbot stream: load its events, decide, append with optimistic concurrency, and
 * update the inline projection (chatbots row), the key index and the audit log, all in one transaction.
 * `key` is the key a create or rotate-key issues; only its hash is stored.
 */
export async function executeChatbotCommand(
  deps: CommandDeps,
  orgId: string,
  chatbotId: string,
  command: ChatbotCommand,
  key?: IssuedKey,
  /** Tracing metadata for the events (the request's correlation and causation ids). */
  trace?: Readonly<Record<string, string>>,
): Promise<CommandResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await withTransaction(deps.pool, async (client) => {
        await lockStreamForUpdate(client, 'chatbot', chatbotId)
        // Capture locks a key row, then its chatbot's row (FOR SHARE OF k, c, capture.ts). A command
        // takes them in the same order, the key rows first, before it writes the chatbot's row (or
        // deletes it, which deletes the keys too): a rotation or deletion racing captures then waits
        // for them, where writing the chatbot row first deadlocked with a capture holding its key row.
        await client.query(
          'SELECT 1 FROM chatbot_api_keys WHERE chatbot_id = $1 ORDER BY key_hash FOR UPDATE',
          [chatbotId],
        )
        const records = await readStream(client, 'chatbot', chatbotId)
        const state = records
          .map((r) => parseRecordedEvent(r) as ChatbotEvent)
          .reduce(evolve, initialChatbotState)
        const decision = decide(command, state, orgId)
        if (!decision.ok) {
          switch (decision.reason) {
            case 'not_found':
              throw new AppError('not_found', 'No chatbot with this id.')
            case 'already_exists':
              throw new AppError('conflict', 'A chatbot with this id already exists.')
            case 'invalid_settings':
              throw new AppError(
                'invalid_request',
                'The settings would be invalid after this patch.',
                decision.issues,
              )
          }
        }
        if (decision.events.length === 0) return { chatbotId, state }
        const appended = await appendToStream(
          client,
          {
            streamType: 'chatbot',
            streamId: chatbotId,
            orgId,
            chatbotId,
            expectedVersion: records.length,
            events: decision.events,
            metadata: trace,
          },
          { now: deps.now },
        )
        const events = appended.records.map((r) => parseRecordedEvent(r) as ChatbotEvent)
        const next = events.reduce(evolve, state)
        await projectChatbot(client, chatbotId, next, appended.streamVersion, deps.now())
        await recordAudit(
          client,
          auditEntriesOf(events, state.status === 'active' ? { chatbotName: state.name } : {}),
        )
        if (state.status === 'absent' && next.status === 'active') {
          await dataKeyFor(client, deps.keyring, chatbotId, orgId)
        }
        if (next.status === 'deleted') {
          // Permanent deletion: its sealed events, here and in every copy of the topics, become unreadable,
          // and the journal keeps nothing of it but the chatbot.deleted event consumers still need.
          await destroyDataKey(client, chatbotId, orgId)
          await purgeChatbotEvents(client, chatbotId, ['chatbot.deleted'])
          await scrubDeletedChatbot(client, chatbotId)
        }
        if (key) await replaceKey(client, chatbotId, orgId, key, deps.now())
        return { chatbotId, state: next }
      })
    } catch (err) {
      if (!(err instanceof StreamVersionConflictError)) throw err
      if (attempt >= CONFLICT_RETRIES) {
        throw new AppError(
          'conflict',
          'The chatbot was changed by another request at the same time; try again.',
        )
      }
    }
  }
}

export function newChatbotId(): string {
  return randomUUID()
}

/** The key index holds exactly the chatbot's current key: the previous one stops working on commit. */
async function replaceKey(
  client: pg.ClientBase,
  chatbotId: string,
  orgId: string,
  key: IssuedKey,
  now: Date,
) {
  await client.query('DELETE FROM chatbot_api_keys WHERE chatbot_id = $1', [chatbotId])
  await client.query(
    'INSERT INTO chatbot_api_keys (key_hash, chatbot_id, org_id, created_at) VALUES ($1, $2, $3, $4)',
    [key.hash, chatbotId, orgId, now],
  )
}
