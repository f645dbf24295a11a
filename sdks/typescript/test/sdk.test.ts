/**
 * The TypeScript SDK against the real service: the built all-in-one (`npm start`'s bundle, its embedded
 * Postgres and event journal) in a child process, driven over HTTP as a developer's program would. One
 * file, so that the service is built once: batching, warnings, refusals, a restart in the middle of
 * sending, a dead server, a rate limit with Retry-After, and flushing on exit (the SDK as published).
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { freePort } from '@cas/db'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type BuiltApp, buildApp, startBuiltApp } from '../../../test/support/built-app.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { spawnWorker } from '../../../test/support/worker-process.ts'
import { type CaptureError, type CaptureWarning, ConversationAnalytics } from '../src/index.js'
import { recordingFetch, signUpWithChatbot, storedMessages, waitForMessages } from './service.ts'

const SDK_DIR = fileURLToPath(new URL('../', import.meta.url))

let app: BuiltApp
beforeAll(async () => {
  await Promise.all([
    buildApp(),
    // The package as published: the exit tests' child program imports it by name.
    promisify(execFile)('npm', ['run', 'build'], { cwd: SDK_DIR }),
  ])
  app = await startBuiltApp()
}, 300_000)
afterAll(async () => {
  await app?.stop()
})

/** The contents of `messages`, sorted: what a conversation must hold exactly once each. */
const contents = (messages: readonly { content: string }[]) => messages.map((m) => m.content).sort()

describe('batching', () => {
  it('sends by size and by time, at most maxBatchSize messages a request, gzip-compressed, each message stored once', async () => {
    const account = await signUpWithChatbot(app.baseUrl)
    const { fetch, requests } = recordingFetch()
    const errors: CaptureError[] = []
    const client = new ConversationAnalytics({
      apiKey: account.apiKey,
      baseUrl: app.baseUrl,
      flushAt: 10,
      flushInterval: 200,
      maxBatchSize: 40,
      fetch,
      onError: (e) => errors.push(e),
    })
    // Long enough that every request body is over the 1 KiB that gzip starts at.
    const text = (n: number) => `message ${n}: ${'how do I reset my password? '.repeat(50)}`
    const sent: string[] = []
    for (let n = 0; n < 95; n++) {
      sent.push(text(n))
      expect(
        client.capture({ conversationId: 'batched', messages: [{ role: 'user', content: text(n) }] }),
      ).toBe(true)
    }
    await client.flush()
    // By size: 95 messages in a few requests, none over maxBatchSize.
    expect(requests.length).toBeGreaterThanOrEqual(3)
    expect(requests.length).toBeLessThan(95)
    expect(requests.every((r) => r.encoding === 'gzip' && r.status === 200)).toBe(true)

    // By time: below flushAt, with no flush() called, the interval sends them.
    const before = requests.length
    for (const n of [95, 96, 97]) {
      sent.push(text(n))
      client.capture({ conversationId: 'batched', messages: [{ role: 'assistant', content: text(n) }] })
    }
    await waitFor(() => client.stats().delivered === 98, { what: 'the interval to send the last three' })
    expect(requests.length).toBe(before + 1)

    // One capture of more messages than a request takes is split.
    const many = Array.from({ length: 150 }, (_, n) => ({ role: 'user' as const, content: `bulk ${n}` }))
    client.capture({ conversationId: 'bulk', messages: many })
    await client.flush()

    expect(await client.shutdown()).toEqual({
      queued: 0,
      delivered: 248,
      stored: 248,
      dropped: 0,
      failed: 0,
      retries: 0,
      rateLimited: 0,
      requests: requests.length,
    })
    expect(errors).toEqual([])
    expect(contents(await waitForMessages(account, 'batched', 98))).toEqual(sent.sort())
    expect(contents(await waitForMessages(account, 'bulk', 150))).toEqual(contents(many))
  })

  it('keeps the ids and times given, and sends a retried message id once', async () => {
    const account = await signUpWithChatbot(app.baseUrl)
    const client = new ConversationAnalytics({ apiKey: account.apiKey, baseUrl: app.baseUrl })
    const message = {
      id: 'given-id',
      role: 'user' as const,
      content: 'hello',
      sentAt: new Date('2026-01-02T03:04:05Z'),
    }
    client.capture({ conversationId: 'ids', messages: [message] })
    await client.flush()
    client.capture({ conversationId: 'ids', messages: [message] })
    const stats = await client.shutdown()
    expect([stats.delivered, stats.stored]).toEqual([2, 1])
    const [stored] = await waitForMessages(account, 'ids', 1)
    expect(stored).toMatchObject({ role: 'user', content: 'hello' })
    expect(new Date(stored!.sentAt).toISOString()).toBe('2026-01-02T03:04:05.000Z')
  })
})

describe('warnings and refusals', () => {
  it("gives the service's warnings to onWarning, and by default prints the first of each kind once", async () => {
    const account = await signUpWithChatbot(app.baseUrl, { customFields: { plan: 'string' } })
    const warnings: CaptureWarning[] = []
    const withCallback = new ConversationAnalytics({
      apiKey: account.apiKey,
      baseUrl: app.baseUrl,
      onWarning: (w) => warnings.push(w),
    })
    withCallback.capture({
      conversationId: 'warned',
      messages: [{ role: 'user', content: 'hi' }],
      custom: { plan: 'pro', seats: 3 },
    })
    await withCallback.shutdown()
    expect(warnings).toEqual([
      { kind: 'custom_field', message: 'custom field seats is not in the schema', conversationId: 'warned' },
    ])

    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      const byDefault = new ConversationAnalytics({ apiKey: account.apiKey, baseUrl: app.baseUrl })
      for (const field of ['seats', 'region']) {
        byDefault.capture({
          conversationId: `default-${field}`,
          messages: [{ role: 'user', content: 'hi' }],
          custom: { [field]: 1 },
        })
        await byDefault.flush()
      }
      await byDefault.shutdown()
      expect(warn).toHaveBeenCalledTimes(1)
      expect(String(warn.mock.calls[0]![0])).toContain('custom field seats is not in the schema')
    } finally {
      warn.mockRestore()
    }
  })

  it('reports a 401 and a 400 to onError without retrying them; the rest of the queue goes on', async () => {
    const account = await signUpWithChatbot(app.baseUrl)
    const wrongKey = recordingFetch()
    const errors: CaptureError[] = []
    const unauthorized = new ConversationAnalytics({
      apiKey: 'svc_live_not-a-key',
      baseUrl: app.baseUrl,
      retryDelay: 10,
      fetch: wrongKey.fetch,
      onError: (e) => errors.push(e),
    })
    unauthorized.capture({ conversationId: 'refused', messages: [{ role: 'user', content: 'hi' }] })
    expect(await unauthorized.shutdown()).toMatchObject({ delivered: 0, failed: 1, retries: 0, requests: 0 })
    expect(wrongKey.requests.map((r) => r.status)).toEqual([401])
    expect(errors.map((e) => [e.kind, e.status, e.response?.error.code, e.messageCount])).toEqual([
      ['rejected', 401, 'unauthorized', 1],
    ])

    errors.length = 0
    const recorded = recordingFetch()
    const client = new ConversationAnalytics({
      apiKey: account.apiKey,
      baseUrl: app.baseUrl,
      retryDelay: 10,
      fetch: recorded.fetch,
      onError: (e) => errors.push(e),
    })
    // A lone surrogate: the service refuses the request (400) naming the field.
    client.capture({ conversationId: 'bad', messages: [{ role: 'user', content: 'cut \ud800 here' }] })
    client.capture({ conversationId: 'good', messages: [{ role: 'user', content: 'fine' }] })
    // `requests` counts those answered 200, as the Python SDK's stats.requests (trial2: it counted both).
    expect(await client.shutdown()).toMatchObject({ delivered: 1, failed: 1, retries: 0, requests: 1 })
    expect(recorded.requests.map((r) => r.status)).toEqual([400, 200])
    expect(errors.map((e) => [e.kind, e.status, e.conversationId])).toEqual([['rejected', 400, 'bad']])
    expect(errors[0]!.response?.error.details?.length).toBeGreaterThan(0)
    // trial2: the message (all the default onError prints) named no field: "…with 400: Text must be
    // well-formed Unicode…", or for a time without a zone only "The request body is invalid.".
    expect(errors[0]!.message).toContain('/messages/0/content: contains a lone UTF-16 surrogate')
    expect(contents(await waitForMessages(account, 'good', 1))).toEqual(['fine'])
    expect(await storedMessages(account, 'bad')).toEqual([])
  })
})

describe('flushing on exit (the built package, in a child process)', () => {
  for (const mode of ['beforeExit', 'SIGTERM'] as const) {
    it(`sends what is queued on ${mode}`, async () => {
      const account = await signUpWithChatbot(app.baseUrl)
      const child = spawnWorker(
        { API_KEY: account.apiKey, BASE_URL: app.baseUrl, CONVERSATION_ID: `exit-${mode}`, MODE: mode },
        fileURLToPath(new URL('./fixtures/exit-child.mjs', import.meta.url)),
        [],
      )
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        // 'close': after the exit and the last of its output.
        child.process.once('close', (code, signal) => resolve({ code, signal })),
      )
      await child.waitForLine((line) => line === 'queued')
      if (mode === 'SIGTERM') child.process.kill('SIGTERM')
      // The SDK flushes, then lets the process end as it would have: on its own, or by the signal.
      expect(await exited).toEqual(
        mode === 'SIGTERM' ? { code: null, signal: 'SIGTERM' } : { code: 0, signal: null },
      )
      expect(child.stderr()).toBe('')
      expect(child.lines).toEqual(['queued'])
      expect(contents(await waitForMessages(account, `exit-${mode}`, 3))).toEqual([
        `${mode} message 1`,
        `${mode} message 2`,
        `${mode} message 3`,
      ])
    })
  }
  it('gives up what it cannot send to a dead server after shutdownTimeout, so the process still exits', async () => {
    const child = spawnWorker(
      {
        API_KEY: 'svc_live_unused',
        BASE_URL: `http://127.0.0.1:${await freePort()}`,
        CONVERSATION_ID: 'exit-dead',
        MODE: 'beforeExit',
        SHUTDOWN_TIMEOUT: '500',
      },
      fileURLToPath(new URL('./fixtures/exit-child.mjs', import.meta.url)),
      [],
    )
    const exited = new Promise<number | null>((resolve) =>
      child.process.once('exit', (code) => resolve(code)),
    )
    // Without giving up, its 10 retries would end as retries_exhausted instead.
    expect(await exited).toBe(0)
    expect(child.lines).toEqual(['queued', 'error shutdown 3'])
  })
})

describe('a dead server', () => {
  it('holds at most maxQueueSize messages, counts and reports what it drops, and gives the rest up at shutdown', async () => {
    const port = await freePort()
    const errors: CaptureError[] = []
    const client = new ConversationAnalytics({
      apiKey: 'svc_live_unused',
      baseUrl: `http://127.0.0.1:${port}`,
      flushAt: 5,
      maxQueueSize: 20,
      maxRetries: 1_000,
      retryDelay: 20,
      maxRetryDelay: 100,
      onError: (e) => errors.push(e),
    })
    const accepted = Array.from({ length: 50 }, (_, n) =>
      client.capture({ conversationId: `c${n % 3}`, messages: [{ role: 'user', content: `m${n}` }] }),
    )
    expect(accepted.filter(Boolean)).toHaveLength(20)
    await waitFor(() => client.stats().retries >= 3, { what: 'retries against the dead server' })
    expect(client.stats()).toMatchObject({ queued: 20, dropped: 30, delivered: 0, failed: 0, requests: 0 })
    expect(errors.every((e) => e.kind === 'queue_full')).toBe(true)
    expect(errors.reduce((n, e) => n + e.messageCount, 0)).toBe(30)

    errors.length = 0
    expect(await client.shutdown(100)).toMatchObject({ queued: 0, dropped: 30, delivered: 0, failed: 20 })
    expect(errors.every((e) => e.kind === 'shutdown')).toBe(true)
    expect(errors.reduce((n, e) => n + e.messageCount, 0)).toBe(20)
  })
})

describe('a restart of the service', () => {
  it('in the middle of sending loses nothing and stores nothing twice', async () => {
    const account = await signUpWithChatbot(app.baseUrl)
    let killed: Promise<void> | undefined
    // The service is killed (SIGKILL) as the fifth request leaves: whether that one was stored or not,
    // its retry must store each of its messages once.
    const { fetch, requests } = recordingFetch((index) => {
      if (index === 5) killed = app.kill()
    })
    const errors: CaptureError[] = []
    const client = new ConversationAnalytics({
      apiKey: account.apiKey,
      baseUrl: app.baseUrl,
      flushAt: 5,
      flushInterval: 50,
      maxRetries: 1_000,
      retryDelay: 100,
      maxRetryDelay: 1_000,
      fetch,
      onError: (e) => errors.push(e),
    })
    const sent = new Map<string, string[]>()
    const send = (n: number) => {
      const conversationId = `restart-${n % 3}`
      const content = `message ${n}`
      sent.set(conversationId, [...(sent.get(conversationId) ?? []), content])
      client.capture({ conversationId, messages: [{ role: n % 2 ? 'assistant' : 'user', content }] })
    }
    let n = 0
    for (; !killed; n++) {
      send(n)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    await killed
    // Down: the SDK keeps queueing and retrying.
    const failedAttempts = requests.filter((r) => r.error !== undefined).length
    for (const end = n + 40; n < end; n++) send(n)
    await waitFor(() => requests.filter((r) => r.error !== undefined).length > failedAttempts, {
      what: 'a request to fail while the service is down',
    })
    await app.start()
    for (const end = n + 20; n < end; n++) send(n)
    const stats = await client.shutdown(120_000)

    expect(errors).toEqual([])
    expect(stats).toMatchObject({ queued: 0, delivered: n, stored: n, dropped: 0, failed: 0 })
    expect(stats.retries).toBeGreaterThan(0)
    for (const [conversationId, messages] of sent) {
      const stored = await waitForMessages(account, conversationId, messages.length)
      expect(contents(stored)).toEqual([...messages].sort())
    }
  }, 300_000)
})

describe('a rate limit', () => {
  let limited: BuiltApp
  beforeAll(async () => {
    limited = await startBuiltApp({ CAPTURE_RATE_LIMIT_PER_MINUTE: '2' })
  }, 120_000)
  afterAll(async () => {
    await limited?.stop()
  })

  it('waits as long as Retry-After says (more than its own retries would), then delivers', async () => {
    const account = await signUpWithChatbot(limited.baseUrl)
    const { fetch, requests } = recordingFetch()
    const errors: CaptureError[] = []
    const client = new ConversationAnalytics({
      apiKey: account.apiKey,
      baseUrl: limited.baseUrl,
      flushAt: 1,
      // Its own backoff would give up within a second: only by honouring Retry-After does it deliver.
      maxRetries: 2,
      retryDelay: 50,
      maxRetryDelay: 100,
      fetch,
      onError: (e) => errors.push(e),
    })
    for (const conversationId of ['limited-1', 'limited-2', 'limited-3']) {
      client.capture({ conversationId, messages: [{ role: 'user', content: conversationId }] })
      await client.flush()
    }
    const stats = await client.shutdown(120_000)
    expect(errors).toEqual([])
    expect(stats).toMatchObject({ delivered: 3, stored: 3, failed: 0 })
    expect(stats.rateLimited).toBeGreaterThan(0)
    const limitedAnswers = requests.filter((r) => r.status === 429)
    expect(limitedAnswers.length).toBe(stats.rateLimited)
    expect(limitedAnswers.every((r) => Number(r.retryAfter) > 0)).toBe(true)
    for (const conversationId of ['limited-1', 'limited-2', 'limited-3'])
      expect(contents(await waitForMessages(account, conversationId, 1))).toEqual([conversationId])
  }, 240_000)

  it('counts each 429 answer once, also when the client shuts down before its retry', async () => {
    // Python's rate_limited counted a 429 at its retry and again when shutdown then gave the request up;
    // both SDKs count answers (this SDK's rateLimited, Python's rate_limited).
    const account = await signUpWithChatbot(limited.baseUrl)
    const { fetch, requests } = recordingFetch()
    const client = new ConversationAnalytics({
      apiKey: account.apiKey,
      baseUrl: limited.baseUrl,
      flushAt: 1,
      fetch,
      onError: () => {},
    })
    for (const conversationId of ['over-1', 'over-2', 'over-3'])
      client.capture({ conversationId, messages: [{ role: 'user', content: conversationId }] })
    await waitFor(() => client.stats().retries >= 1, { what: "the 429's retry to wait for Retry-After" })
    const stats = await client.shutdown(0)
    expect(requests.filter((r) => r.status === 429)).toHaveLength(1)
    expect(stats).toMatchObject({ rateLimited: 1, retries: 1 })
    expect(stats.delivered + stats.failed).toBe(3)
  }, 240_000)
})
