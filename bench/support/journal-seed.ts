import { withTransaction } from '@cas/db'
import { readJournal } from '@cas/eventlog'
import { parseRecordedEvent } from '@cas/events'
import type pg from 'pg'
import { TURNS } from './capture-body.ts'
import { uuidFrom } from './sql.ts'

/** Events the seed writes per conversation: started, messages captured, and its two analysis results. */
export const EVENTS_PER_CONVERSATION = 4
// Positions are (transaction id << 16) | index: at most 65,536 events per transaction.
const CONVERSATIONS_PER_TRANSACTION = 16_000

const SENTIMENTS = [
  { score: -0.42, label: 'negative' },
  { score: 0, label: 'neutral' },
  { score: 0.61, label: 'positive' },
] as const

/**
 * The payloads of a conversation's four events, as JSON text with placeholders the seed's SQL fills in:
 * @N@ (the conversation's number), @U@ (its end user's) and @T@ (when it happened, ISO 8601 UTC).
 */
export const SEED_EVENTS = [
  {
    streamType: 'conversation',
    streamVersion: 1,
    type: 'conversation.started',
    payload: {
      conversationId: 'conv-@N@',
      user: { id: 'user-@U@', plan: 'pro' },
      organization: {},
      session: { pageUrl: 'https://shop.example.com/orders', device: 'desktop' },
      custom: {},
    },
  },
  {
    streamType: 'conversation',
    streamVersion: 2,
    type: 'conversation.messages-captured',
    payload: {
      messages: TURNS.map(([role, content], i) => ({ id: `m-${i}`, role, content, sentAt: '@T@' })),
      receivedAt: '@T@',
      analysisRequested: true,
    },
  },
  {
    streamType: 'analysis',
    streamVersion: 1,
    type: 'analysis.messages-analyzed',
    payload: {
      analyzer: { name: 'bench', version: '1' },
      results: TURNS.map((_, i) => ({
        messageId: `m-${i}`,
        sentiment: SENTIMENTS[i % 3],
        topics: i % 2 ? [] : ['shipping'],
      })),
    },
  },
  {
    streamType: 'analysis',
    streamVersion: 2,
    type: 'analysis.conversation-analyzed',
    payload: {
      analyzer: { name: 'bench', version: '1' },
      sentiment: SENTIMENTS[2],
      topics: ['shipping', 'refunds'],
    },
  },
] as const

/** Throws unless every seed event, placeholders filled, is valid by the event schemas (libs/events). */
export function validateSeedEvents(orgId: string, chatbotId: string): void {
  for (const e of SEED_EVENTS) {
    const payload = JSON.parse(fill(JSON.stringify(e.payload), 7, 2, new Date().toISOString()))
    parseRecordedEvent({
      id: '00000000-0000-4000-8000-000000000000',
      type: e.type,
      version: 1,
      occurredAt: new Date().toISOString(),
      orgId,
      chatbotId,
      streamId: '00000000-0000-4000-8000-000000000001',
      streamVersion: e.streamVersion,
      position: '1',
      metadata: {},
      payload,
    })
  }
}

function fill(template: string, n: number, user: number, at: string): string {
  return template.replaceAll('@N@', String(n)).replaceAll('@U@', String(user)).replaceAll('@T@', at)
}

/**
 * Appends `conversations` conversations of one chatbot to the journal, four events each, fast: one
 * multi-row INSERT … SELECT per transaction of 16,000 conversations, with positions and stream
 * versions exactly as appendToStream gives them. Their times spread over the year before `now`; the
 * end users have three conversations each. Returns the number of events written.
 */
export async function seedJournal(
  pool: pg.Pool,
  opts: { orgId: string; chatbotId: string; conversations: number; now?: Date; salt?: string },
): Promise<number> {
  validateSeedEvents(opts.orgId, opts.chatbotId)
  const now = opts.now ?? new Date()
  const salt = opts.salt ?? 'bench'
  const templates = SEED_EVENTS.map((e) => JSON.stringify(e.payload))
  for (let from = 0; from < opts.conversations; from += CONVERSATIONS_PER_TRANSACTION) {
    const to = Math.min(opts.conversations, from + CONVERSATIONS_PER_TRANSACTION)
    await withTransaction(pool, async (client) => {
      await client.query(
        `WITH conv AS (
           SELECT i, ${uuidFrom('$1 || i')} AS id,
                  $2::timestamptz - make_interval(secs => (i::float8 / $3) * 365 * 86400) AS at
             FROM generate_series($4::int, $5::int - 1) i
         )
         INSERT INTO event_journal (position, event_id, stream_type, stream_id, stream_version, type, version,
                                    occurred_at, org_id, chatbot_id, payload, metadata)
         SELECT pg_current_xact_id()::text::bigint * 65536 + (conv.i - $4) * 4 + e.k, gen_random_uuid(),
                e.stream_type, conv.id, e.stream_version, e.type, 1, conv.at, $6, $7,
                replace(replace(replace(e.template, '@N@', conv.i::text), '@U@', (conv.i / 3)::text),
                        '@T@', to_char(conv.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::jsonb,
                '{}'
           FROM conv,
                unnest($8::int[], $9::text[], $10::int[], $11::text[], $12::text[])
                  AS e(k, stream_type, stream_version, type, template)
          ORDER BY conv.i, e.k`,
        [
          salt,
          now,
          opts.conversations,
          from,
          to,
          opts.orgId,
          opts.chatbotId,
          SEED_EVENTS.map((_, k) => k),
          SEED_EVENTS.map((e) => e.streamType),
          SEED_EVENTS.map((e) => e.streamVersion),
          SEED_EVENTS.map((e) => e.type),
          templates,
        ],
      )
      await client.query(
        `INSERT INTO event_streams (stream_type, stream_id, version, last_tx, org_id, chatbot_id)
         SELECT t, ${uuidFrom('$1 || i')}, 2, pg_current_xact_id(), $4, $5
           FROM generate_series($2::int, $3::int - 1) i, unnest(ARRAY['conversation', 'analysis']) t`,
        [salt, from, to, opts.orgId, opts.chatbotId],
      )
    })
  }
  await checkSeededEvents(pool)
  return opts.conversations * EVENTS_PER_CONVERSATION
}

/** Throws unless the first events in the journal (the seed's, as written) are valid by the event schemas. */
export async function checkSeededEvents(pool: pg.Pool, limit = 100): Promise<void> {
  const { records } = await readJournal(pool, { after: '0', limit })
  for (const r of records) parseRecordedEvent(r)
}
