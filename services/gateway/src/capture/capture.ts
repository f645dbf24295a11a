import { randomUUID } from 'node:crypto'
import { RetryableTransactionError } from '@cas/db'
import { type AppendRequest, appendToStreams } from '@cas/eventlog'
import { AppError } from '@cas/http'
import { dataKeyFor, type Keyring, type StoredDataKey, sealEvents, unwrapStored } from '@cas/keyring'
import type pg from 'pg'
import {
  type CaptureCommand,
  type CaptureDecision,
  type CaptureResult,
  type ConversationState,
  captureCommand,
  decideCapture,
  latestSentAt,
} from './decide.ts'
import type { ConversationMetadata } from './metadata.ts'
import type { CaptureBody } from './schema.ts'

export type { CaptureResult }

/** One capture request, its API key already checked once outside the transaction. */
export interface CaptureRequest {
  readonly keyHash: Buffer
  readonly body: CaptureBody
  /** Tracing metadata for the events (correlation and causation ids: the request's). */
  readonly trace?: Readonly<Record<string, string>>
}

/** What one request of a group gets: its result, or the error it alone answers with. */
export type CaptureOutcome = CaptureResult | AppError

/** What the read statement returns for each request whose key is valid. */
interface StateRow extends StoredDataKey {
  n: number
  chatbot_id: string
  org_id: string
  settings: Record<string, unknown>
  created_id: string | null
  existing_id: string | null
  end_user: ConversationMetadata['user'] | null
  end_user_organization: ConversationMetadata['organization'] | null
  session: ConversationMetadata['session'] | null
  custom: ConversationMetadata['custom'] | null
  message_batches: number | null
  batches_read: number | null
  /** The incoming message ids the ledger holds, each with its message's digest (null: stored before 0050). */
  stored: Record<string, string | null> | null
}

/**
 * Captures in one transaction, each as if alone: the state is read (one statement), each capture is
 * decided (`decideCapture`, pure), and the decisions are written (one statement) and appended (one).
 * Used for one request and for a group of concurrent ones (group commit, see group-commit.ts): five
 * round trips with BEGIN and COMMIT, one commit for all. A request whose key is no longer valid gets its
 * 401 and takes no part; any other error throws, and nothing of the group is left behind. No two
 * requests may name the same conversation.
 *
 * Locks, in this order: the key and chatbot rows (shared: a rotation or deletion committing first makes
 * this capture a 401, one committing after waits for it), then the conversations' registry rows,
 * created or locked (concurrent captures of one conversation take turns, so metadata merges and
 * message-id checks never interleave). Each step takes its rows in key order; overlapping groups that
 * still meet in a deadlock are rolled back and run again by `withTransaction`.
 */
export async function captureGroup(
  client: pg.ClientBase,
  keyring: Keyring,
  requests: readonly CaptureRequest[],
  now: () => Date,
): Promise<CaptureOutcome[]> {
  const registeredAt = now()
  const commands = requests.map((r) => captureCommand(r.body, registeredAt))
  if (new Set(commands.map((c) => c.conversationId)).size !== commands.length) {
    // Two requests of one chatbot could not both lock its row (another chatbot's would only wait a turn).
    throw new Error('a capture group names one conversation twice')
  }
  const states = await readStates(client, requests, commands, registeredAt)
  await refreshStale(client, states, commands)

  const outcomes: CaptureOutcome[] = []
  const registry: RegistryChange[] = []
  const batches: { conversation_id: string; message_ids: string[]; message_digests: string }[] = []
  const appends: AppendRequest[] = []
  const dataKeys = new Map<string, Buffer>()
  for (const [n, command] of commands.entries()) {
    const row = states.get(n)
    if (!row) {
      outcomes[n] = new AppError('unauthorized', 'The API key is not valid.')
      continue
    }
    const conversation = conversationOf(row, command)
    const decision: CaptureDecision = decideCapture(command, { conversation, settings: row.settings })
    if (decision.registry) {
      registry.push({
        id: conversation.id,
        ...decision.registry.metadata,
        last_message_at: decision.registry.lastMessageAt,
        batches: decision.newMessageIds.length > 0 ? 1 : 0,
      })
    }
    if (decision.newMessageIds.length > 0) {
      batches.push({
        conversation_id: conversation.id,
        message_ids: decision.newMessageIds,
        message_digests: decision.newMessageDigests.join(''),
      })
    }
    if (decision.events.length > 0) {
      appends.push({
        streamType: 'conversation',
        streamId: conversation.id,
        orgId: row.org_id,
        chatbotId: row.chatbot_id,
        expectedVersion: 'any',
        events: sealEvents(
          await dataKeyOf(client, keyring, row, dataKeys),
          { chatbotId: row.chatbot_id, streamId: conversation.id },
          decision.events,
        ),
        metadata: requests[n]!.trace,
      })
    }
    outcomes[n] = decision.result
  }
  if (registry.length > 0 || batches.length > 0) {
    await client.query({
      name: 'capture-write',
      text: WRITE_SQL,
      values: [JSON.stringify(registry), JSON.stringify(batches)],
    })
  }
  await appendToStreams(client, appends, { now })
  return outcomes
}

/**
 * Whether the read statement's snapshot is older than what it found locked: a conversation registered by
 * a transaction that committed after the snapshot was taken (another gateway's first capture of it), or
 * a registry row (read locked, at its newest) counting a ledger batch the snapshot does not show (a
 * capture committed while this one waited for the lock).
 */
const isStale = (row: StateRow) =>
  !row.created_id && (!row.existing_id || row.batches_read !== row.message_batches)

/**
 * Reads the stale conversations again, locked, in a new statement: its snapshot is taken after the locks
 * the transaction already holds were granted, so it sees every batch committed before them, and no other
 * capture can add one while this transaction holds the row. Many gateways on one conversation then take
 * turns instead of rolling back and running again.
 */
async function refreshStale(
  client: pg.ClientBase,
  states: Map<number, StateRow>,
  commands: readonly CaptureCommand[],
): Promise<void> {
  const stale = [...states.values()].filter(isStale)
  if (stale.length === 0) return
  const { rows } = await client.query<{
    n: number
    id: string
    end_user: StateRow['end_user']
    end_user_organization: StateRow['end_user_organization']
    session: StateRow['session']
    custom: StateRow['custom']
    message_batches: number
    batches_read: number
    stored: Record<string, string | null> | null
  }>(
    `SELECT u.n, c.id, c.end_user, c.end_user_organization, c.session, c.custom, c.message_batches,
            (SELECT count(*)::int FROM capture_message_batches b WHERE b.conversation_id = c.id) AS batches_read,
            (SELECT jsonb_object_agg(x.m, encode(substring(b.message_digests FROM x.i::int * 8 - 7 FOR 8), 'hex'))
               FROM capture_message_batches b, unnest(b.message_ids) WITH ORDINALITY AS x(m, i)
              WHERE b.conversation_id = c.id AND x.m = ANY(u.message_ids)) AS stored
       FROM json_to_recordset($1::json) AS u(n int, chatbot_id uuid, external_id text, message_ids text[])
       JOIN capture_conversations c ON c.chatbot_id = u.chatbot_id AND c.external_id = u.external_id
      ORDER BY c.chatbot_id, c.external_id FOR UPDATE OF c`,
    [
      JSON.stringify(
        stale.map((row) => ({
          n: row.n,
          chatbot_id: row.chatbot_id,
          external_id: commands[row.n]!.conversationId,
          message_ids: commands[row.n]!.messages.map((m) => m.id),
        })),
      ),
    ],
  )
  for (const fresh of rows) {
    const { n, id, ...rest } = fresh
    Object.assign(states.get(n)!, { existing_id: id, ...rest })
  }
}

/** How the read's row answers for the conversation, checked against what the row says it holds. */
function conversationOf(row: StateRow, command: CaptureCommand): ConversationState {
  if (row.created_id) return { status: 'new', id: row.created_id }
  if (!row.existing_id || isStale(row)) {
    // Still stale after reading again under the lock: the row went away meanwhile (an erasure).
    throw new RetryableTransactionError(
      'capture_stale_registry',
      `conversation ${command.conversationId} changed while being captured; run again`,
    )
  }
  return {
    status: 'existing',
    id: row.existing_id,
    metadata: {
      user: row.end_user ?? {},
      organization: row.end_user_organization ?? {},
      session: row.session ?? {},
      custom: row.custom ?? {},
    },
    storedMessageIds: new Set(Object.keys(row.stored ?? {})),
    storedDigests: new Map(
      Object.entries(row.stored ?? {}).flatMap(([id, digest]) => (digest === null ? [] : [[id, digest]])),
    ),
  }
}

interface RegistryChange extends ConversationMetadata {
  id: string
  last_message_at: string | null
  batches: number
}

/** The state of every request, by its index in the group (absent: its key is not valid). */
async function readStates(
  client: pg.ClientBase,
  requests: readonly CaptureRequest[],
  commands: readonly CaptureCommand[],
  registeredAt: Date,
): Promise<Map<number, StateRow>> {
  const input = commands.map((c, n) => ({
    n,
    key: requests[n]!.keyHash.toString('hex'),
    id: randomUUID(),
    external_id: c.conversationId,
    ...c.metadata,
    last_message_at: latestSentAt(c.messages),
    message_ids: c.messages.map((m) => m.id),
  }))
  const { rows } = await client.query<StateRow>({
    name: 'capture-read',
    text: READ_SQL,
    values: [JSON.stringify(input), registeredAt],
  })
  return new Map(rows.map((r) => [r.n, r]))
}

/**
 * The capture's read, one statement ($1 the requests as JSON, $2 now):
 * 1. `keys`: the valid keys among the requests', with their chatbot (settings, data key), locked shared.
 * 2. `created`: the registry rows of conversations seen for the first time, with the command's metadata
 *    and messages (one batch): the decision then changes nothing in them.
 * 3. `existing`: the others' registry rows, locked for update, at their newest version.
 * 4. For those, which of the incoming message ids the ledger already holds, each with its message's
 *    digest (8 bytes at its place in its batch's message_digests, migration 0050), and how many batches this
 *    snapshot shows (compared with the row's count: see `conversationOf`).
 */
const READ_SQL = `
WITH input AS MATERIALIZED (
  SELECT * FROM json_to_recordset($1::json)
           AS i(n int, key text, id uuid, external_id text, "user" jsonb, organization jsonb, session jsonb,
                custom jsonb, last_message_at timestamptz, message_ids text[])
), keys AS MATERIALIZED (
  SELECT k.key_hash, c.id AS chatbot_id, c.org_id, c.settings, d.wrapped_key, d.master_key_id
    FROM chatbot_api_keys k JOIN chatbots c ON c.id = k.chatbot_id
    LEFT JOIN chatbot_data_keys d ON d.chatbot_id = c.id
   WHERE k.key_hash IN (SELECT decode(input.key, 'hex') FROM input)
   ORDER BY c.id, k.key_hash FOR SHARE OF k, c
), items AS MATERIALIZED (
  SELECT input.*, keys.chatbot_id, keys.org_id FROM input JOIN keys ON keys.key_hash = decode(input.key, 'hex')
), created AS (
  INSERT INTO capture_conversations
    (id, chatbot_id, org_id, external_id, end_user, end_user_organization, session, custom, created_at,
     last_message_at, message_batches)
  SELECT id, chatbot_id, org_id, external_id, "user", organization, session, custom, $2, last_message_at, 1
    FROM items ORDER BY chatbot_id, external_id
  ON CONFLICT (chatbot_id, external_id) DO NOTHING
  RETURNING id, chatbot_id, external_id
), existing AS MATERIALIZED (
  SELECT c.* FROM (SELECT chatbot_id, external_id FROM items ORDER BY chatbot_id, external_id) i
   CROSS JOIN LATERAL (
     SELECT c.id, c.chatbot_id, c.external_id, c.end_user, c.end_user_organization, c.session, c.custom,
            c.message_batches
       FROM capture_conversations c WHERE c.chatbot_id = i.chatbot_id AND c.external_id = i.external_id
        FOR UPDATE OF c) c
)
SELECT items.n, items.chatbot_id, items.org_id, keys.settings, keys.wrapped_key, keys.master_key_id,
       created.id AS created_id, existing.id AS existing_id, existing.end_user, existing.end_user_organization,
       existing.session, existing.custom, existing.message_batches,
       (SELECT count(*)::int FROM capture_message_batches b WHERE b.conversation_id = existing.id) AS batches_read,
       (SELECT jsonb_object_agg(x.m, encode(substring(b.message_digests FROM x.i::int * 8 - 7 FOR 8), 'hex'))
          FROM capture_message_batches b, unnest(b.message_ids) WITH ORDINALITY AS x(m, i)
         WHERE b.conversation_id = existing.id AND x.m = ANY(items.message_ids)) AS stored
  FROM items JOIN keys ON keys.chatbot_id = items.chatbot_id AND keys.key_hash = decode(items.key, 'hex')
  LEFT JOIN created ON created.chatbot_id = items.chatbot_id AND created.external_id = items.external_id
  LEFT JOIN existing ON existing.chatbot_id = items.chatbot_id AND existing.external_id = items.external_id`

/**
 * The capture's write, one statement: the existing conversations' registry rows as decided ($1), and
 * the ledger's new batches of message ids and their digests ($2), one row per capture that stored messages.
 */
const WRITE_SQL = `
WITH registry AS (
  UPDATE capture_conversations c
     SET end_user = u."user", end_user_organization = u.organization, session = u.session, custom = u.custom,
         last_message_at = GREATEST(c.last_message_at, u.last_message_at),
         message_batches = c.message_batches + u.batches
    FROM json_to_recordset($1::json)
         AS u(id uuid, "user" jsonb, organization jsonb, session jsonb, custom jsonb, last_message_at timestamptz,
              batches int)
   WHERE c.id = u.id
)
INSERT INTO capture_message_batches (conversation_id, first_message_id, message_ids, message_digests)
SELECT b.conversation_id, b.message_ids[1], b.message_ids, decode(b.message_digests, 'hex')
  FROM json_to_recordset($2::json) AS b(conversation_id uuid, message_ids text[], message_digests text)`

/** The chatbot's data key, unwrapped once per group (created on a chatbot's first capture). */
async function dataKeyOf(
  client: pg.ClientBase,
  keyring: Keyring,
  chatbot: StateRow,
  cache: Map<string, Buffer>,
): Promise<Buffer> {
  let key = cache.get(chatbot.chatbot_id)
  if (!key) {
    // A live chatbot's key is never destroyed (deletion takes the lock this transaction holds).
    const stored = unwrapStored(keyring, chatbot.chatbot_id, chatbot)
    key =
      stored instanceof Buffer
        ? stored
        : await dataKeyFor(client, keyring, chatbot.chatbot_id, chatbot.org_id)
    cache.set(chatbot.chatbot_id, key)
  }
  return key
}
