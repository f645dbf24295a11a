import { AppError } from '@cas/http'
import { describe, expect, it } from 'vitest'
import { captureBody, createChatbot, postCapture } from '../../../../test/support/chatbots.ts'
import { useSignedInGateway } from '../../../../test/support/gateway.ts'
import { journalEvents } from '../../../../test/support/journal.ts'
import { testKeyring } from '../../../../test/support/keyring.ts'
import { hashApiKey } from '../chatbots/api-key.ts'
import type { CaptureRequest, CaptureResult } from './capture.ts'
import { CaptureCommitter, type GroupCommitOptions } from './group-commit.ts'
import { type CaptureBody, captureBodySchema } from './schema.ts'

const gateway = useSignedInGateway()

/** A committer on the test database that records the size of every group it commits. */
function committer(opts: Partial<GroupCommitOptions> = {}) {
  const groups: number[] = []
  const c = new CaptureCommitter(gateway.db.pool, testKeyring, () => new Date(), {
    maxTransactions: 1,
    maxGroup: 64,
    onCommit: (size) => groups.push(size),
    ...opts,
  })
  return { committer: c, groups }
}

function request(apiKey: string, body: unknown): CaptureRequest {
  return { keyHash: hashApiKey(apiKey), body: captureBodySchema.parse(body) as CaptureBody }
}

/** The transaction ids (a journal position is the transaction's id << 16, then an index) of some streams. */
async function transactionsOf(conversationIds: readonly string[]): Promise<Set<bigint>> {
  const { rows } = await gateway.db.pool.query<{ position: string }>(
    "SELECT position::text FROM event_journal WHERE stream_type = 'conversation' AND stream_id = ANY($1)",
    [conversationIds],
  )
  return new Set(rows.map((r) => BigInt(r.position) >> 16n))
}

describe('group commit of concurrent captures', () => {
  it('commits captures that arrive together in one transaction, each with its own result and events', async () => {
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const { committer: c, groups } = committer()
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        c.capture(request(apiKey, captureBody(`group-${i}`, [`a-${i}`, `b-${i}`, `a-${i}`]))),
      ),
    )
    expect(results.map((r) => r.messagesStored)).toEqual(Array(40).fill(2))
    expect(new Set(results.map((r) => r.conversationId)).size).toBe(40)
    expect(groups.reduce((a, b) => a + b, 0)).toBe(40)
    expect(groups).toEqual([40])
    expect((await transactionsOf(results.map((r) => r.conversationId))).size).toBe(1)
    for (const [i, result] of results.entries()) {
      const events = await journalEvents(gateway.db.pool, 'conversation', result.conversationId)
      expect(events.map((e) => [e.type, e.stream_version])).toEqual([
        ['conversation.started', 1],
        ['conversation.messages-captured', 2],
      ])
      expect(events[0]!.payload.conversationId).toBe(`group-${i}`)
      expect(events[1]!.payload.messages!.map((m) => m.id)).toEqual([`a-${i}`, `b-${i}`])
    }
  })

  it('stores each message once when several gateways capture one conversation at the same time', async () => {
    // Gateways do not share a committer: their transactions on one conversation overlap, so a capture may
    // wait for another's lock on the registry row, with a snapshot older than the other's ledger batch.
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const gateways = Array.from({ length: 6 }, () => committer({ maxTransactions: 4, maxGroup: 1 }).committer)
    for (const round of [0, 1, 2]) {
      const conversation = `gateways-${round}`
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          gateways[i % gateways.length]!.capture(
            request(apiKey, captureBody(conversation, [`m${i}`, `m${i + 1}`, `m${i + 2}`])),
          ),
        ),
      )
      expect(results.reduce((sum, r) => sum + r.messagesStored, 0)).toBe(26)
      expect(new Set(results.map((r) => r.conversationId)).size).toBe(1)
      const events = await journalEvents(gateway.db.pool, 'conversation', results[0]!.conversationId)
      expect(events.filter((e) => e.type === 'conversation.started')).toHaveLength(1)
      const captured = events.flatMap((e) => e.payload.messages?.map((m) => m.id) ?? [])
      expect(captured.sort()).toEqual(Array.from({ length: 26 }, (_, i) => `m${i}`).sort())
      const { rows } = await gateway.db.pool.query<{ message_id: string }>(
        'SELECT message_id FROM capture_message_ids WHERE conversation_id = $1',
        [results[0]!.conversationId],
      )
      expect(rows.map((r) => r.message_id).sort()).toEqual(captured.sort())
    }
  })

  it('keeps captures of one conversation in order, in groups one after the other', async () => {
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const { committer: c, groups } = committer({ maxTransactions: 2 })
    const bodies = [
      captureBody('same', ['m1', 'm2'], { user: { id: 'u1', plan: 'free' } }),
      captureBody('same', ['m2', 'm3'], { user: { plan: 'pro' } }),
      captureBody('other', ['m1']),
      captureBody('same', ['m4'], { session: { id: 's1' } }),
    ]
    const results = await Promise.all(bodies.map((b) => c.capture(request(apiKey, b))))
    expect(results.map((r) => r.messagesStored)).toEqual([2, 1, 1, 1])
    expect(groups.reduce((a, b) => a + b, 0)).toBe(4)
    const events = await journalEvents(gateway.db.pool, 'conversation', results[0]!.conversationId)
    expect(events.map((e) => e.type)).toEqual([
      'conversation.started',
      'conversation.messages-captured',
      'conversation.metadata-updated',
      'conversation.messages-captured',
      'conversation.metadata-updated',
      'conversation.messages-captured',
    ])
    expect(events.map((e) => e.stream_version)).toEqual([1, 2, 3, 4, 5, 6])
    expect(events[2]!.payload.user).toEqual({ id: 'u1', plan: 'pro' })
    expect(events[4]!.payload).toMatchObject({ user: { id: 'u1', plan: 'pro' }, session: { id: 's1' } })
    expect(events.flatMap((e) => e.payload.messages?.map((m) => m.id) ?? [])).toEqual([
      'm1',
      'm2',
      'm3',
      'm4',
    ])
  })

  it('answers 401 to the captures whose key is gone and stores the rest of their group', async () => {
    const live = await createChatbot(gateway.app, gateway.cookie)
    const rotated = await createChatbot(gateway.app, gateway.cookie)
    const res = await gateway.app.inject({
      method: 'POST',
      url: `/api/v1/chatbots/${rotated.chatbot.id}/rotate-key`,
      headers: { cookie: gateway.cookie },
    })
    expect(res.statusCode).toBe(200)
    const { committer: c, groups } = committer()
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        c.capture(request(i % 2 ? rotated.apiKey : live.apiKey, captureBody(`mixed-${i}`, 1))),
      ),
    )
    expect(groups).toEqual([10])
    for (const [i, outcome] of outcomes.entries()) {
      if (i % 2) {
        expect(outcome.status).toBe('rejected')
        const reason = (outcome as PromiseRejectedResult).reason
        expect(reason).toBeInstanceOf(AppError)
        expect((reason as AppError).code).toBe('unauthorized')
      } else {
        expect(outcome.status).toBe('fulfilled')
      }
    }
    const { rows } = await gateway.db.pool.query<{ external_id: string }>(
      "SELECT external_id FROM capture_conversations WHERE external_id LIKE 'mixed-%' ORDER BY external_id",
    )
    expect(rows.map((r) => r.external_id)).toEqual(['mixed-0', 'mixed-2', 'mixed-4', 'mixed-6', 'mixed-8'])
  })

  it('runs a failed group again one capture at a time, so only the capture at fault fails', async () => {
    const healthy = await createChatbot(gateway.app, gateway.cookie)
    const broken = await createChatbot(gateway.app, gateway.cookie)
    // A first capture creates each chatbot's data key; then the broken one's wrapped key is damaged.
    for (const bot of [healthy, broken]) {
      expect(
        (await postCapture(gateway.app, bot.apiKey, captureBody(`first-${bot.chatbot.id}`, 1))).statusCode,
      ).toBe(200)
    }
    await gateway.db.pool.query(
      'UPDATE chatbot_data_keys SET wrapped_key = decode(md5(wrapped_key::text), $2) WHERE chatbot_id = $1',
      [broken.chatbot.id, 'hex'],
    )
    const { committer: c, groups } = committer()
    const outcomes = await Promise.allSettled(
      Array.from({ length: 9 }, (_, i) =>
        c.capture(request(i === 4 ? broken.apiKey : healthy.apiKey, captureBody(`isolate-${i}`, 2))),
      ),
    )
    expect(outcomes.map((o) => o.status)).toEqual([
      ...Array(4).fill('fulfilled'),
      'rejected',
      ...Array(4).fill('fulfilled'),
    ])
    expect(outcomes[4]!.status === 'rejected' && outcomes[4]!.reason).not.toBeInstanceOf(AppError)
    // The group failed as a whole (nothing committed), then each capture ran alone.
    expect(groups).toEqual(Array(8).fill(1))
    const stored = outcomes.flatMap((o) =>
      o.status === 'fulfilled' ? [(o.value as CaptureResult).conversationId] : [],
    )
    expect((await transactionsOf(stored)).size).toBe(8)
    const { rows } = await gateway.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM capture_conversations WHERE external_id LIKE 'isolate-%'",
    )
    expect(rows[0]!.n).toBe(8)
  })

  it('gives every capture its own transaction when grouping is off', async () => {
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const { committer: c, groups } = committer({ maxTransactions: 4, maxGroup: 1 })
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => c.capture(request(apiKey, captureBody(`alone-${i}`, 1)))),
    )
    expect(groups).toEqual(Array(12).fill(1))
    expect((await transactionsOf(results.map((r) => r.conversationId))).size).toBe(12)
  })
})
