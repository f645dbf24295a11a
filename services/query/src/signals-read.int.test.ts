import { randomUUID } from 'node:crypto'
import { BUILTIN_SIGNAL_NAMES } from '@cas/events'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import type { Interval } from './analytics/range.ts'
import { BUCKETS, type RollupScope } from './repositories/analytics.ts'
import {
  GAP_SIGNALS,
  type NeedsAttention,
  readSignals,
  type SignalsReport,
  signalOrder,
} from './repositories/signals.ts'
import { conversationTopics, resolveTopics } from './repositories/topics.ts'

// readSignals counts in SQL (issue 32); its answers must be those of the reading it replaced, which
// loaded every conversation of the range into Node and counted there: that reading is kept below as the
// reference, and both read the same seeded read models, over the cases SQL could get wrong: buckets at
// a zone's midnight (half-hour zones, microseconds), merged topics (a conversation in a merged topic
// and its canonical one counts once), a hidden topic, conversations in several topics, key phrases and
// "other", two chatbots with a topic of the same label, custom signals whose label changed, a signal
// turned off for one chatbot (its conversations have none), and conversations without an external id.

const NOW = new Date('2026-11-20T12:00:00Z')
const HOUR = 3_600_000
let db: TestDatabase
const org = randomUUID()
const bots = [randomUUID(), randomUUID()] as const
const topic = (bot: number, k: number) => `t${bot}-${k}`

beforeAll(async () => {
  db = await createTestDatabase()
  const p = db.pool
  // Per chatbot 8 topics: t-0 … t-5 canonical ("Billing" on both chatbots for t-0), t-6 merged into t-1,
  // t-7 merged into t-2; t-3 hidden on chatbot 0.
  for (const [b, bot] of bots.entries()) {
    for (let k = 0; k < 8; k++) {
      await p.query(
        `INSERT INTO rm_topics (org_id, chatbot_id, id, label, keywords, configured, canonical_id, discovered_at,
                                updated_at, hidden)
         VALUES ($1, $2, $3, $4, '{}', false, $5, $6, $6, $7)`,
        [
          org,
          bot,
          topic(b, k),
          k === 0 ? 'Billing' : `topic ${b}-${k}`,
          k === 6 ? topic(b, 1) : k === 7 ? topic(b, 2) : topic(b, k),
          NOW,
          b === 0 && k === 3,
        ],
      )
    }
  }
  // 600 conversations over the last 15 days: most on the hour at a half-hour zone's midnight or a
  // microsecond either side of it, some at odd times; topics from a fixed pick, several per conversation.
  const signals: unknown[][] = []
  for (let i = 0; i < 600; i++) {
    const b = i % 3 === 0 ? 1 : 0
    const base = NOW.getTime() - (i % 15) * 86_400_000 - (i % 24) * HOUR
    const at = new Date(base - (i % 4 === 0 ? 30 * 60_000 : i % 4 === 1 ? 17_123 : 0))
    // i and i + 120 end in the same millisecond, a few microseconds apart: which is the more recent?
    const micros = [0, 999, 1, 500, 0][Math.floor(i / 120)]!
    const topics =
      i % 11 === 0
        ? ['other']
        : i % 13 === 0
          ? ['refund policy', topic(b, 1)]
          : [topic(b, i % 8), topic(b, (i * 7) % 8), ...(i % 4 === 0 ? [topic(b, 1), topic(b, 6)] : [])]
    const id = randomUUID()
    await p.query(
      `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, end_user, message_count,
         first_message_at, last_message_at, created_at, updated_at, sentiment_score, sentiment_label, topics,
         stream_version)
       VALUES ($1, $2, $3, $4, '{}', 2, $5::timestamptz - interval '1 minute',
               $5::timestamptz + make_interval(secs => $6::int / 1000000.0), $5, $5, 0, 'neutral', $7, 2)`,
      [id, org, bots[b], i % 37 === 0 ? null : `c-${i}`, at, micros, topics],
    )
    const names = [
      ...BUILTIN_SIGNAL_NAMES.filter((_, s) => (i * (s + 3)) % (s + 4) === 0),
      // Frustration turned off on chatbot 1: its conversations have none.
    ].filter((s) => !(b === 1 && s === 'frustration'))
    for (const s of names) signals.push([org, bots[b], id, s, null])
    if (i % 6 === 0)
      signals.push([org, bots[b], id, 'custom:discount', `Discount ${i % 12 === 0 ? 'A' : 'B'}`])
    if (i % 29 === 0) signals.push([org, bots[b], id, 'custom:angry', null])
  }
  for (const s of signals) {
    await p.query(
      `INSERT INTO rm_conversation_signals (org_id, chatbot_id, conversation_id, signal, label, confidence,
                                            evidence, analyzer)
       VALUES ($1, $2, $3, $4, $5, 0.8, '{}', 'test')`,
      s,
    )
  }
})

afterAll(async () => {
  await db?.drop()
})

const scopes = (days: number): [string, RollupScope][] => {
  const to = new Date(NOW.getTime() + HOUR)
  const from = new Date(to.getTime() - days * 86_400_000)
  return [
    ['the organization', { orgId: org, from, to }],
    ['chatbot 0', { orgId: org, chatbotId: bots[0], from, to }],
    ['chatbot 1', { orgId: org, chatbotId: bots[1], from, to }],
  ]
}

describe('readSignals in SQL', () => {
  const cases: [Interval, number, string][] = [
    ['day', 14, 'UTC'],
    ['day', 14, 'Asia/Kolkata'],
    ['day', 10, 'America/St_Johns'],
    ['week', 14, 'Asia/Kathmandu'],
    ['hour', 3, 'UTC'],
    ['hour', 3, 'Asia/Kolkata'],
  ]
  it.each(cases)(
    'answers as the reading in Node did: by %s over %i days in %s',
    async (interval, days, tz) => {
      const client = await db.pool.connect()
      try {
        for (const [name, scope] of scopes(days)) {
          for (const limit of [3, 100]) {
            const { needsAttention, ...got } = await readSignals(client, scope, interval, tz, limit)
            const want = await referenceReadSignals(client, scope, interval, tz, limit)
            // The examples described (needs-attention-examples.int.test.ts): the same conversations.
            for (const t of needsAttention) {
              expect(t.exampleConversations.map((e) => e.id)).toEqual(t.examples)
              for (const e of t.exampleConversations) expect(e.conversationId).toMatch(/^c-\d+$/)
            }
            expect(
              { ...got, needsAttention: needsAttention.map(({ exampleConversations: _, ...t }) => t) },
              `${name}, limit ${limit}`,
            ).toEqual(want)
            // The seed reaches every case it is meant to.
            if (limit === 100 && scope.chatbotId === undefined) {
              expect(got.conversations).toBeGreaterThan(50)
              expect(got.signals.map((s) => s.name)).toContain('custom:discount')
              expect(got.topics.map((t) => t.label).filter((l) => l === 'Billing')).toHaveLength(2)
              expect(got.topics.map((t) => t.id)).not.toContain(topic(0, 3))
              expect(got.topics.map((t) => t.id)).not.toContain(topic(0, 6))
              expect(needsAttention.length).toBeGreaterThan(2)
            }
          }
        }
      } finally {
        client.release()
      }
    },
  )
})

// The reading of 2b8a3a7 and before, as it was: every conversation of the range counted in Node.

const rate = (n: number, of: number) => (of === 0 ? 0 : Math.round((n / of) * 10_000) / 10_000)

function wilsonLower(k: number, n: number): number {
  if (n === 0) return 0
  const z = 1.96
  const p = k / n
  const centre = p + (z * z) / (2 * n)
  const spread = z * Math.sqrt((p * (1 - p) + (z * z) / (4 * n)) / n)
  return (centre - spread) / (1 + (z * z) / n)
}

const EXAMPLES = 3

/** The report as it was: Needs attention's examples by id only. */
type ReferenceReport = Omit<SignalsReport, 'needsAttention'> & {
  needsAttention: Omit<NeedsAttention, 'exampleConversations'>[]
}

async function referenceReadSignals(
  client: pg.ClientBase,
  scope: RollupScope,
  interval: Interval,
  tz: string,
  limit: number,
): Promise<ReferenceReport> {
  const { series, key } = BUCKETS[interval]
  const params: unknown[] = [scope.orgId, scope.from, scope.to, scope.chatbotId ?? null]
  if (series.includes('$TZ')) params.push(tz)
  const tzParam = `$${params.length}::text`
  // The same parameters as below: each is typed once, so the statement mentions the unused ones.
  const { rows: buckets } = await client.query<{ key: Date; bucket: Date }>(
    `WITH b AS (${series.replaceAll('$TZ', tzParam)})
     SELECT key, bucket FROM b WHERE $1::uuid IS NOT NULL AND ($4::uuid IS NULL OR $4::uuid IS NOT NULL)
      ORDER BY key`,
    params,
  )
  const { rows } = await client.query<{
    id: string
    topics: string[]
    key: Date
    last_message_at: Date
    signals: string[]
    labels: (string | null)[]
  }>(
    `SELECT c.id, c.topics, c.last_message_at, ${key.replaceAll('$TZ', tzParam)} AS key,
            coalesce(array_agg(s.signal) FILTER (WHERE s.signal IS NOT NULL), '{}') AS signals,
            coalesce(array_agg(s.label) FILTER (WHERE s.signal IS NOT NULL), '{}') AS labels
       FROM (SELECT id, topics, last_message_at, date_trunc('hour', last_message_at) AS hour
               FROM rm_conversations
              WHERE org_id = $1 AND last_message_at >= $2 AND last_message_at < $3
                AND ($4::uuid IS NULL OR chatbot_id = $4)
                AND external_id IS NOT NULL) c
       LEFT JOIN rm_conversation_signals s ON s.conversation_id = c.id AND s.org_id = $1
      GROUP BY c.id, c.topics, c.last_message_at, c.hour`,
    params,
  )
  const bucketOf = new Map(buckets.map((b) => [b.key.getTime(), b.bucket.toISOString()]))
  const perBucket = new Map<string, number>(buckets.map((b) => [b.bucket.toISOString(), 0]))
  const bySignal = new Map<string, { label: string | null; ids: string[]; perBucket: Map<string, number> }>()
  for (const name of BUILTIN_SIGNAL_NAMES) bySignal.set(name, { label: null, ids: [], perBucket: new Map() })
  const resolved = await resolveTopics(
    client,
    scope.orgId,
    rows.flatMap((r) => r.topics),
  )
  // Topics an owner or admin hid are left out of the per-topic figures, as from the topics report; their
  // conversations still count in the signals' totals (they keep their topics and their signals).
  const { rows: hiddenRows } = await client.query<{ id: string }>(
    `SELECT id FROM rm_topics WHERE org_id = $1 AND hidden AND ($2::uuid IS NULL OR chatbot_id = $2)`,
    [scope.orgId, scope.chatbotId ?? null],
  )
  const hidden = new Set(hiddenRows.map((r) => r.id))
  const byTopic = new Map<string, { label: string; ids: string[]; signals: Map<string, string[]> }>()
  // Most recent first, so that a topic's examples are its latest conversations.
  rows.sort((a, b) => b.last_message_at.getTime() - a.last_message_at.getTime() || (a.id < b.id ? 1 : -1))
  for (const r of rows) {
    const bucket = bucketOf.get(r.key.getTime())
    if (bucket !== undefined) perBucket.set(bucket, (perBucket.get(bucket) ?? 0) + 1)
    r.signals.forEach((name, i) => {
      let entry = bySignal.get(name)
      if (!entry) {
        entry = { label: r.labels[i] ?? null, ids: [], perBucket: new Map() }
        bySignal.set(name, entry)
      }
      entry.ids.push(r.id)
      if (bucket !== undefined) entry.perBucket.set(bucket, (entry.perBucket.get(bucket) ?? 0) + 1)
    })
    for (const topic of conversationTopics(r.topics, resolved)) {
      if (hidden.has(topic.id)) continue
      let entry = byTopic.get(topic.id)
      if (!entry) {
        entry = { label: topic.label, ids: [], signals: new Map() }
        byTopic.set(topic.id, entry)
      }
      entry.ids.push(r.id)
      for (const name of r.signals) {
        const list = entry.signals.get(name) ?? []
        list.push(r.id)
        entry.signals.set(name, list)
      }
    }
  }
  const total = rows.length
  const signals = [...bySignal]
    .sort(([a], [b]) => signalOrder(a, b))
    .map(([name, s]) => ({
      name,
      label: s.label,
      // No chatbot here has a read-model row (settings): every conversation counts as checked.
      enabled: true,
      conversations: s.ids.length,
      conversationsChecked: total,
      rate: rate(s.ids.length, total),
      trend: [...perBucket].map(([bucket, n]) => {
        const k = s.perBucket.get(bucket) ?? 0
        return { bucket, conversations: k, conversationsChecked: n, rate: rate(k, n) }
      }),
    }))
  const topics = [...byTopic]
    .map(([id, t]) => ({
      id,
      label: t.label,
      conversations: t.ids.length,
      signals: Object.fromEntries(
        GAP_SIGNALS.map((name) => {
          const k = t.signals.get(name)?.length ?? 0
          // Without read-model rows, every conversation of the topic counts as checked.
          return [name, { conversations: k, conversationsChecked: t.ids.length, rate: rate(k, t.ids.length) }]
        }),
      ),
    }))
    .sort((a, b) => b.conversations - a.conversations || (a.label < b.label ? -1 : 1))
  const needsAttention = [...byTopic]
    .map(([id, t]) => {
      const failed = t.signals.get('bot_failure') ?? []
      return {
        id,
        label: t.label,
        conversations: t.ids.length,
        botFailures: failed.length,
        conversationsChecked: t.ids.length,
        botFailureRate: rate(failed.length, t.ids.length),
        score: Math.round(wilsonLower(failed.length, t.ids.length) * 10_000) / 10_000,
        examples: failed.slice(0, EXAMPLES),
      }
    })
    .filter((t) => t.botFailures > 0)
    .sort((a, b) => b.score - a.score || b.botFailures - a.botFailures || (a.label < b.label ? -1 : 1))
  return {
    conversations: total,
    signals,
    topics: topics.slice(0, limit),
    needsAttention: needsAttention.slice(0, limit),
    buckets: [...perBucket].map(([bucket, conversations]) => ({ bucket, conversations })),
  }
}
