import { createHash } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { readJournal } from '@cas/eventlog'
import { type NewEvent, newEvent, parseRecordedEvent } from '@cas/events'
import { dataKeyFor, type Keyring, openRecords, sealEvents } from '@cas/keyring'
import type pg from 'pg'
import { TURNS } from './capture-body.ts'

/** Events the seed writes per conversation: started, messages captured, and its two analysis results. */
export const EVENTS_PER_CONVERSATION = 4
// Positions are (transaction id << 16) | index: at most 65,536 events per transaction.
const CONVERSATIONS_PER_TRANSACTION = 16_000
// Events go in as one JSON parameter per statement: about 8 MB for 1,000 conversations.
const CONVERSATIONS_PER_STATEMENT = 1_000

const SENTIMENTS = [
  { score: -0.42, label: 'negative' },
  { score: 0, label: 'neutral' },
  { score: 0.61, label: 'positive' },
] as const

/** Conversation `n`'s four events, as the gateway and the analysis service decide them (not yet sealed). */
export function seedEvents(n: number, at: string) {
  return [
    {
      streamType: 'conversation',
      streamVersion: 1,
      event: newEvent('conversation.started', {
        conversationId: `conv-${n}`,
        // End users have three conversations each.
        user: { id: `user-${Math.floor(n / 3)}`, plan: 'pro' },
        organization: {},
        session: { pageUrl: 'https://shop.example.com/orders', device: 'desktop' },
        custom: {},
      }),
    },
    {
      streamType: 'conversation',
      streamVersion: 2,
      event: newEvent('conversation.messages-captured', {
        messages: TURNS.map(([role, content], i) => ({ id: `m-${i}`, role, content, sentAt: at })),
        receivedAt: at,
        analysisRequested: true,
      }),
    },
    {
      streamType: 'analysis',
      streamVersion: 1,
      event: newEvent('analysis.messages-analyzed', {
        analyzer: { name: 'bench', version: '1' },
        signalsDecided: true,
        results: TURNS.map((_, i) => ({
          messageId: `m-${i}`,
          sentiment: SENTIMENTS[i % 3]!,
          topics: i % 2 ? [] : [{ id: 'shipping', label: 'shipping' }],
        })),
      }),
    },
    {
      streamType: 'analysis',
      streamVersion: 2,
      event: newEvent('analysis.conversation-analyzed', {
        analyzer: { name: 'bench', version: '1' },
        sentiment: SENTIMENTS[2],
        assistantSentiment: null,
        topics: [
          { id: 'shipping', label: 'shipping' },
          { id: 'refunds', label: 'refunds' },
        ],
      }),
    },
  ] satisfies { streamType: string; streamVersion: number; event: NewEvent }[]
}

/** Throws unless every seed event is valid by the event schemas (libs/events), as readers see it. */
export function validateSeedEvents(orgId: string, chatbotId: string): void {
  const at = new Date().toISOString()
  for (const e of seedEvents(7, at)) {
    parseRecordedEvent({
      ...e.event,
      id: '00000000-0000-4000-8000-000000000000',
      occurredAt: at,
      orgId,
      chatbotId,
      streamId: '00000000-0000-4000-8000-000000000001',
      streamVersion: e.streamVersion,
      position: '1',
      metadata: {},
    })
  }
}

/** The same UUID for the same text, shaped as version 4 (the event schemas accept RFC 9562 UUIDs only). */
function uuidFrom(text: string): string {
  const h = createHash('md5').update(text).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/**
 * Appends `conversations` conversations of one chatbot to the journal, four events each, as the
 * services write them: the conversation events sealed with the chatbot's data key (so a rebuild opens
 * them, as it must in production), positions and stream versions exactly as appendToStream gives them.
 * Fast: one multi-row INSERT per 1,000 conversations, 16,000 per transaction. Their times spread over
 * the year before `now`. Returns the number of events written.
 */
export async function seedJournal(
  pool: pg.Pool,
  opts: {
    orgId: string
    chatbotId: string
    conversations: number
    /** Seals with the chatbot's data key, which it wraps (the chatbot's services' master key). */
    keyring: Keyring
    now?: Date
    salt?: string
  },
): Promise<number> {
  validateSeedEvents(opts.orgId, opts.chatbotId)
  const dataKey = await dataKeyFor(pool, opts.keyring, opts.chatbotId, opts.orgId)
  const now = (opts.now ?? new Date()).getTime()
  const salt = opts.salt ?? 'bench'
  for (let from = 0; from < opts.conversations; from += CONVERSATIONS_PER_TRANSACTION) {
    const to = Math.min(opts.conversations, from + CONVERSATIONS_PER_TRANSACTION)
    const streamIds: string[] = []
    await withTransaction(pool, async (client) => {
      for (let first = from; first < to; first += CONVERSATIONS_PER_STATEMENT) {
        const rows = []
        for (let i = first; i < Math.min(to, first + CONVERSATIONS_PER_STATEMENT); i++) {
          const streamId = uuidFrom(`${salt}${i}`)
          streamIds.push(streamId)
          const at = new Date(now - (i / opts.conversations) * 365 * 86_400_000).toISOString()
          const stream = { chatbotId: opts.chatbotId, streamId }
          for (const [k, e] of seedEvents(i, at).entries()) {
            const [sealed] = sealEvents(dataKey, stream, [e.event])
            rows.push({
              k: (i - from) * EVENTS_PER_CONVERSATION + k,
              stream_type: e.streamType,
              stream_id: streamId,
              stream_version: e.streamVersion,
              type: sealed!.type,
              version: sealed!.version,
              occurred_at: at,
              payload: sealed!.payload,
            })
          }
        }
        await client.query(
          `INSERT INTO event_journal (position, event_id, stream_type, stream_id, stream_version, type, version,
                                      occurred_at, org_id, chatbot_id, payload, metadata)
           SELECT pg_current_xact_id()::text::bigint * 65536 + e.k, gen_random_uuid(), e.stream_type, e.stream_id,
                  e.stream_version, e.type, e.version, e.occurred_at, $2, $3, e.payload, '{}'
             FROM json_to_recordset($1::json) AS e(k int, stream_type text, stream_id uuid, stream_version int,
                                                   type text, version int, occurred_at timestamptz, payload jsonb)
            ORDER BY e.k`,
          [JSON.stringify(rows), opts.orgId, opts.chatbotId],
        )
      }
      await client.query(
        `INSERT INTO event_streams (stream_type, stream_id, version, last_tx, org_id, chatbot_id)
         SELECT t, id, 2, pg_current_xact_id(), $2, $3
           FROM unnest($1::uuid[]) id, unnest(ARRAY['conversation', 'analysis']) t`,
        [streamIds, opts.orgId, opts.chatbotId],
      )
    })
  }
  await checkSeededEvents(pool, opts.keyring)
  return opts.conversations * EVENTS_PER_CONVERSATION
}

/**
 * Throws unless the first events in the journal (the seed's, as written) open and are valid by the
 * event schemas, as the projector reads them.
 */
export async function checkSeededEvents(pool: pg.Pool, keyring: Keyring, limit = 100): Promise<void> {
  const { records } = await readJournal(pool, { after: '0', limit })
  for (const opened of await openRecords(pool, keyring, records)) {
    if (!opened.ok)
      throw new Error(`seeded event ${opened.record.type} unreadable: ${opened.reason} ${opened.detail}`)
  }
}
