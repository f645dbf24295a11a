import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { captureBody, createChatbot, postCapture } from '../../../../test/support/chatbots.ts'
import { deeplyNestedJson } from '../../../../test/support/deep-json.ts'
import { useSignedInGateway } from '../../../../test/support/gateway.ts'
import { countRows, journalEvents } from '../../../../test/support/journal.ts'
import { waitFor } from '../../../../test/support/wait.ts'

const gateway = useSignedInGateway()

describe('concurrent captures', () => {
  it('stores 8 identical captures sent at once exactly once', async () => {
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const body = captureBody('identical', 5)
    const results = await Promise.all(Array.from({ length: 8 }, () => postCapture(gateway.app, apiKey, body)))
    expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(200))
    const stored = results.map((r) => r.json().messagesStored)
    expect(stored.reduce((a, b) => a + b, 0)).toBe(5)
    expect(stored.filter((s) => s === 5)).toHaveLength(1)
    const conversationIds = new Set(results.map((r) => r.json().conversationId))
    expect(conversationIds.size).toBe(1)
    const events = await journalEvents(gateway.db.pool, 'conversation', [...conversationIds][0])
    expect(events.map((e) => e.type)).toEqual(['conversation.started', 'conversation.messages-captured'])
  })

  it('adds up to the distinct messages when overlapping batches race', async () => {
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const batches = Array.from({ length: 12 }, (_, i) =>
      captureBody('overlap', [`m${i}`, `m${i + 1}`, `m${i + 2}`]),
    )
    const results = await Promise.all(batches.map((b) => postCapture(gateway.app, apiKey, b)))
    expect(results.every((r) => r.statusCode === 200)).toBe(true)
    expect(results.reduce((sum, r) => sum + r.json().messagesStored, 0)).toBe(14)
    const conversationId = results[0]!.json().conversationId
    const captured = (await journalEvents(gateway.db.pool, 'conversation', conversationId)).flatMap(
      (e) => e.payload.messages?.map((m) => m.id) ?? [],
    )
    expect(captured.sort()).toEqual(Array.from({ length: 14 }, (_, i) => `m${i}`).sort())
  })

  it('refuses the old key for every capture that starts after rotate-key returned', async () => {
    const { chatbot, apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const captures = Array.from({ length: 20 }, (_, i) =>
      postCapture(gateway.app, apiKey, captureBody(`rotate-${i}`, 1)),
    )
    const rotation = gateway.app.inject({
      method: 'POST',
      url: `/api/v1/chatbots/${chatbot.id}/rotate-key`,
      headers: { cookie: gateway.cookie },
    })
    const [rotated, ...results] = await Promise.all([rotation, ...captures])
    expect(rotated.statusCode).toBe(200)
    for (const [i, r] of results.entries()) {
      expect([200, 401]).toContain(r.statusCode)
      const { rows } = await gateway.db.pool.query(
        'SELECT 1 FROM capture_conversations WHERE external_id = $1',
        [`rotate-${i}`],
      )
      expect(rows.length, `capture ${i} answered ${r.statusCode}`).toBe(r.statusCode === 200 ? 1 : 0)
    }
    expect((await postCapture(gateway.app, apiKey, captureBody('after-rotate'))).statusCode).toBe(401)
    expect(
      (await postCapture(gateway.app, rotated.json().apiKey, captureBody('after-rotate'))).statusCode,
    ).toBe(200)
  })

  for (const command of ['rotate-key', 'delete'] as const) {
    it(`locks a key row before its chatbot row for ${command}, as capture does, so that they queue instead of deadlocking`, async () => {
      const { chatbot, apiKey } = await createChatbot(gateway.app, gateway.cookie)
      // A capture in flight: its shared locks on the key row, then the chatbot row (FOR SHARE OF k, c).
      const inFlight = await gateway.db.pool.connect()
      try {
        await inFlight.query('BEGIN')
        await inFlight.query(
          `SELECT 1 FROM chatbot_api_keys k JOIN chatbots c ON c.id = k.chatbot_id WHERE c.id = $1
           FOR SHARE OF k, c`,
          [chatbot.id],
        )
        const waitingOn = async () => {
          // The row a blocked backend waits for: it holds the tuple lock while waiting on the holder.
          const { rows } = await gateway.db.pool.query<{ relation: string }>(
            `SELECT l.relation::regclass::text AS relation FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
              WHERE l.locktype = 'tuple' AND l.granted AND a.wait_event_type = 'Lock'
                AND a.datname = current_database()`,
          )
          return rows.map((r) => r.relation)
        }
        const done = gateway.app.inject(
          command === 'delete'
            ? { method: 'DELETE', url: `/api/v1/chatbots/${chatbot.id}`, headers: { cookie: gateway.cookie } }
            : {
                method: 'POST',
                url: `/api/v1/chatbots/${chatbot.id}/rotate-key`,
                headers: { cookie: gateway.cookie },
              },
        )
        const first = await waitFor(async () => {
          const rows = await waitingOn()
          return rows.length > 0 && rows
        })
        // Writing the chatbot row first, a command then waited for another capture holding the key row.
        expect(first).toEqual(['chatbot_api_keys'])
        const capture = postCapture(gateway.app, apiKey, captureBody(`queued-${command}`))
        await inFlight.query('COMMIT')
        const [answered, captured] = await Promise.all([done, capture])
        expect([200, 204]).toContain(answered.statusCode)
        // Either order is right, and neither deadlocks. Queued behind the command, the capture finds the
        // old key gone. But Postgres lets a share locker past a waiting FOR UPDATE while the row holds only
        // share locks, so a capture whose read reaches the server before the COMMIT above completes goes
        // first, and is stored: it started before the command returned.
        expect([200, 401, 404]).toContain(captured.statusCode)
        const { rows } = await gateway.db.pool.query(
          'SELECT 1 FROM capture_conversations WHERE external_id = $1',
          [`queued-${command}`],
        )
        // Stored only when accepted, and a deletion leaves no capture state behind in either order.
        expect(rows.length).toBe(captured.statusCode === 200 && command === 'rotate-key' ? 1 : 0)
        expect((await postCapture(gateway.app, apiKey, captureBody('after-command'))).statusCode).toBe(401)
      } finally {
        await inFlight.query('ROLLBACK').catch(() => {})
        inFlight.release()
      }
    })
  }

  it('never fails or leaves capture state behind when captures race a delete', async () => {
    const { chatbot, apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const captures = Array.from({ length: 20 }, (_, i) =>
      postCapture(gateway.app, apiKey, captureBody(`delete-${i}`, 2)),
    )
    const deletion = gateway.app.inject({
      method: 'DELETE',
      url: `/api/v1/chatbots/${chatbot.id}`,
      headers: { cookie: gateway.cookie },
    })
    const [deleted, ...results] = await Promise.all([deletion, ...captures])
    expect(deleted.statusCode).toBe(200)
    expect(results.every((r) => r.statusCode === 200 || r.statusCode === 401)).toBe(true)
    const { rows } = await gateway.db.pool.query(
      'SELECT 1 FROM capture_conversations WHERE chatbot_id = $1',
      [chatbot.id],
    )
    expect(rows).toEqual([])
    expect((await postCapture(gateway.app, apiKey, captureBody('after-delete'))).statusCode).toBe(401)
  })
})

describe('capture with arbitrary input (property)', () => {
  const validMessage = fc.record({
    id: fc.string({ minLength: 1, maxLength: 20 }),
    role: fc.constantFrom('user', 'assistant', 'system', 'tool'),
    content: fc.string({ maxLength: 50 }),
  })
  const mostlyValid = fc.record(
    {
      conversationId: fc.oneof(fc.string({ maxLength: 30 }), fc.anything()),
      messages: fc.oneof(
        fc.array(validMessage, { maxLength: 5 }),
        fc.array(fc.anything(), { maxLength: 3 }),
        fc.anything(),
      ),
      user: fc.oneof(
        fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.boolean())),
        fc.anything(),
      ),
      custom: fc.anything(),
      userId: fc.anything(),
    },
    { requiredKeys: [] },
  )

  // Deep nesting in each free-form place and around the whole body (issue 16: 5,000 levels answered 500).
  const deeplyNested = fc
    .tuple(
      deeplyNestedJson(),
      fc.constantFrom('user', 'organization', 'session', 'custom', 'metadata', 'messages', 'ignored', ''),
    )
    .map(([nested, field]) => {
      if (field === '') return nested
      const message = '{"id":"1","role":"user","content":"deep"}'
      return field === 'messages'
        ? `{"conversationId":"deep","messages":[${message},${nested}]}`
        : `{"conversationId":"deep","messages":[${message}],"${field}":${nested}}`
    })

  it('answers 200 or 4xx, never 5xx, and a 4xx stores nothing', async () => {
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const bodies = fc.oneof(
      fc.oneof(mostlyValid, fc.jsonValue()).map((body) => JSON.stringify(body)),
      deeplyNested,
    )
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const before = await countRows(gateway.db.pool, 'event_journal')
        const res = await postCapture(gateway.app, apiKey, body, {
          'content-type': 'application/json',
        })
        expect(res.statusCode === 200 || (res.statusCode >= 400 && res.statusCode < 500), res.body).toBe(true)
        if (res.statusCode !== 200) {
          expect(res.json().ok).toBe(false)
          expect(await countRows(gateway.db.pool, 'event_journal')).toBe(before)
        }
      }),
      { numRuns: 150 },
    )
  })
})
