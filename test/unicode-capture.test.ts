/**
 * Issue 30: a capture carrying a lone UTF-16 surrogate was answered 200, and then stopped every
 * organization's projections and analysis (Postgres refuses it). Properties over arbitrary Unicode, for
 * every string field of a capture (ids, content, the metadata objects' keys and values, the deprecated
 * fields, an unknown top-level field):
 * - well-formed text is taken, and reads back identically through the projector and the query service;
 *   analysis runs on it, so the pipeline does not stall on it (both event-log modes);
 * - a lone surrogate (escaped in the JSON) anywhere is a 400 naming the string, and bytes that are not
 *   UTF-8 are a 400 naming it too; either way nothing is stored.
 */

import { readStream } from '@cas/eventlog'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import { countRows } from './support/journal.ts'
import { modelConfigEnv } from './support/model.ts'
import {
  EVENT_LOG_MODES,
  startLiveAnalysis,
  startLiveProjector,
  startPipeline,
  type TestPipeline,
} from './support/pipeline.ts'
import { waitFor } from './support/wait.ts'

/**
 * Text of any Unicode scalar values (U+0000 aside: refused by design), or of whole graphemes (a grapheme
 * may be several code points); at most 256 UTF-16 code units, the shortest limit of the fields it fills.
 */
const text = (maxLength: number, minLength = 0) =>
  fc
    .oneof(
      fc.string({ unit: 'binary', maxLength }),
      fc.string({ unit: 'grapheme', maxLength }),
      fc.string({ unit: 'grapheme-composite', maxLength }),
    )
    .map((s) => s.replaceAll('\u0000', ''))
    .filter((s) => s.length >= minLength && s.length <= 256)

/** An object key: any text but the one JSON.parse refuses as prototype poisoning. */
const key = text(12).filter((k) => k !== '__proto__' && k !== 'constructor')
const value = text(24)
const flat = (values: fc.Arbitrary<unknown>) => fc.dictionary(key, values, { maxKeys: 4 })

const messages = fc.uniqueArray(
  fc.record({
    id: text(16, 1),
    role: fc.constantFrom('user', 'assistant', 'system', 'tool'),
    content: text(120),
  }),
  { selector: (m) => m.id, minLength: 1, maxLength: 4 },
)

/** A capture body with arbitrary text in every string field. */
const captureBodies = fc
  .record(
    {
      conversationId: text(24, 1),
      messages,
      // The known fields of user and session are strings: every value is one here.
      user: flat(value),
      organization: flat(fc.oneof(value, fc.integer(), fc.boolean())),
      session: flat(value),
      custom: flat(fc.oneof(value, fc.integer(), fc.boolean())),
      metadata: flat(value),
      userId: value,
    },
    { requiredKeys: ['conversationId', 'messages'] },
  )
  .map((body) => ({
    ...body,
    messages: body.messages.map((m, i) => ({
      ...m,
      sentAt: new Date(Date.UTC(2026, 10, 20, 10, 0, i)).toISOString(),
    })),
  }))

/** An object or array of a body, walked by path. */
type Node = Record<string | number, unknown>

type CaptureBody = typeof captureBodies extends fc.Arbitrary<infer T> ? T : never

/** What a conversation read shows of a capture body that started the conversation. */
function expectedConversation(body: CaptureBody, conversationId: string) {
  const user = { ...body.user }
  if (body.userId !== undefined && user.id === undefined) user.id = body.userId
  return {
    conversationId,
    user,
    organization: body.organization ?? {},
    session: body.session ?? {},
    custom: { ...body.metadata, ...body.custom },
    messages: body.messages.map(({ id, role, content, sentAt }) => ({ id, role, content, sentAt })),
  }
}

for (const mode of EVENT_LOG_MODES) {
  describe.skipIf(!mode.available)(`capture of arbitrary Unicode, end to end, ${mode.name} mode`, () => {
    const cleanups: (() => Promise<unknown>)[] = []
    let pipeline: TestPipeline
    let cookie: string
    let apiKey: string

    beforeAll(async () => {
      pipeline = await startPipeline(mode.name, cleanups)
      await startLiveProjector(pipeline, cleanups)
      await startLiveAnalysis(pipeline, cleanups, modelConfigEnv())
      ;({ cookie } = await signUp(pipeline.app))
      ;({ apiKey } = await createChatbot(pipeline.app, cookie, { name: 'Unicode' }))
    })
    afterAll(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
    })

    it('reads every well-formed string back as it was sent, and analyzes it', async () => {
      let run = 0
      await fc.assert(
        fc.asyncProperty(captureBodies, async (generated) => {
          // A conversation of its own per run: a later run's metadata would merge into an earlier one's.
          const body = { ...generated, conversationId: `${++run}:${generated.conversationId}` }
          const res = await postCapture(pipeline.app, apiKey, body)
          expect(res.statusCode, res.body).toBe(200)
          const id = res.json().conversationId
          const read = await waitFor(
            async () => {
              const r = await pipeline.app.inject({
                method: 'GET',
                url: `/api/v1/conversations/${id}`,
                headers: { cookie },
              })
              return (
                r.statusCode === 200 && r.json().conversation.messages.length === body.messages.length && r
              )
            },
            { what: `conversation ${id} to be readable` },
          )
          const { conversation } = read.json()
          const { conversationId, user, organization, session, custom, messages: readMessages } = conversation
          expect({
            conversationId,
            user,
            organization,
            session,
            custom,
            messages: readMessages.map(({ id, role, content, sentAt }: Record<string, unknown>) => ({
              id,
              role,
              content,
              sentAt,
            })),
          }).toEqual(expectedConversation(body, body.conversationId))
          // Analysis took it: the conversation's analysis is recorded (not a failure).
          const analyzed = await waitFor(
            async () => {
              const events = await readStream(pipeline.db.pool, 'analysis', id)
              return events.length > 0 && events.map((e) => e.type)
            },
            { what: `conversation ${id} to be analyzed` },
          )
          expect(analyzed).not.toContain('analysis.failed')
          // And its results are projected: every message has its sentiment.
          await waitFor(
            async () => {
              const r = await pipeline.app.inject({
                method: 'GET',
                url: `/api/v1/conversations/${id}`,
                headers: { cookie },
              })
              return r
                .json()
                .conversation?.messages.every((m: { sentiment: unknown }) => m.sentiment !== null)
            },
            { what: `the sentiment of conversation ${id}'s messages` },
          )
        }),
        // Kafka mode's runs each wait for the relay and a consumer group: fewer of them.
        { numRuns: mode.name === 'journal' ? 40 : 20 },
      )
    })
  })
}

describe('capture of ill-formed text', () => {
  const cleanups: (() => Promise<unknown>)[] = []
  let pipeline: TestPipeline
  let apiKey: string

  beforeAll(async () => {
    pipeline = await startPipeline('journal', cleanups)
    const { cookie } = await signUp(pipeline.app)
    ;({ apiKey } = await createChatbot(pipeline.app, cookie, { name: 'Ill-formed' }))
  })
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })

  const stored = () =>
    Promise.all(['event_journal', 'capture_conversations'].map((t) => countRows(pipeline.db.pool, t)))

  /** Every string of a body that a caller chooses freely (role and sentAt are not free text), with its path. */
  function freeStrings(body: Record<string, unknown>): { path: (string | number)[]; isKey: boolean }[] {
    const found: { path: (string | number)[]; isKey: boolean }[] = []
    const walk = (value: unknown, path: (string | number)[]) => {
      if (typeof value === 'string') {
        const last = path.at(-1)
        if (last !== 'role' && last !== 'sentAt') found.push({ path, isKey: false })
      } else if (Array.isArray(value)) {
        for (const [i, item] of value.entries()) walk(item, [...path, i])
      } else if (value !== null && typeof value === 'object') {
        for (const [k, item] of Object.entries(value)) {
          if (path.length > 0 && typeof path[0] === 'string' && path[0] !== 'messages') {
            found.push({ path: [...path, k], isKey: true })
          }
          walk(item, [...path, k])
        }
      }
    }
    walk(body, [])
    return found
  }

  /** `body` with `insert(text)` in place of the string (or the key) at `target`. */
  function withText(
    body: Record<string, unknown>,
    target: { path: (string | number)[]; isKey: boolean },
    insert: (text: string) => string,
  ): Record<string, unknown> {
    const copy = structuredClone(body)
    const parent = target.path.slice(0, -1).reduce<Node>((node, step) => node[step] as Node, copy as Node)
    const last = target.path.at(-1)!
    if (!target.isKey) parent[last] = insert(parent[last] as string)
    else {
      // Rebuilt in the same key order, the changed key in place of the old one.
      const entries = Object.entries(parent).map(([k, v]) => [k === last ? insert(k) : k, v])
      for (const k of Object.keys(parent)) delete parent[k]
      for (const [k, v] of entries) parent[k as string] = v
    }
    return copy
  }

  const pointer = (path: (string | number)[]) =>
    path.map((step) => `/${String(step).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')

  /** A body with an unknown top-level field too: its key and value are text the caller sends. */
  const bodiesAndTargets = captureBodies
    .chain((body) =>
      fc.tuple(fc.constant(body), text(12, 1), value).map(([b, unknownKey, unknownValue]) => {
        const withUnknown: Record<string, unknown> = { ...b }
        if (!(unknownKey in withUnknown) && unknownKey !== '__proto__' && unknownKey !== 'constructor')
          withUnknown[unknownKey] = unknownValue
        return withUnknown
      }),
    )
    .chain((body) => {
      const targets = freeStrings(body)
      const topKeys = Object.keys(body).map((k) => ({ path: [k], isKey: true }))
      return fc.tuple(fc.constant(body), fc.constantFrom(...targets, ...topKeys))
    })

  it('answers 400 naming the string for a lone surrogate anywhere, and stores nothing', async () => {
    const before = await stored()
    const surrogate = fc.oneof(
      fc.integer({ min: 0xd800, max: 0xdbff }),
      fc.integer({ min: 0xdc00, max: 0xdfff }),
    )
    await fc.assert(
      fc.asyncProperty(bodiesAndTargets, surrogate, fc.nat(), async ([body, target], unit, at) => {
        const bad = withText(body, target, (s) => {
          // Anywhere in the text, also between the halves of a pair: whichever half it meets, one is alone.
          const i = at % (s.length + 1)
          return s.slice(0, i) + String.fromCharCode(unit) + s.slice(i)
        })
        const res = await postCapture(pipeline.app, apiKey, bad)
        expect(res.statusCode, res.body).toBe(400)
        expect(res.json().error.details).toEqual([
          {
            path: pointer(target.isKey ? [...target.path.slice(0, -1), keyAfter(bad, target)] : target.path),
            message: 'contains a lone UTF-16 surrogate (U+D800 to U+DFFF not in a pair)',
            in: 'body',
          },
        ])
      }),
      { numRuns: 50 },
    )
    expect(await stored()).toEqual(before)
  })

  it('answers 400 naming the string for bytes that are not UTF-8 anywhere, and stores nothing', async () => {
    const before = await stored()
    const notUtf8 = fc.oneof(
      fc.integer({ min: 0x80, max: 0xbf }).map((b) => [b]), // a continuation byte alone
      fc.tuple(fc.constantFrom(0xc0, 0xc1), fc.integer({ min: 0x80, max: 0xbf })), // overlong
      fc.integer({ min: 0xc2, max: 0xf4 }).map((b) => [b]), // a lead byte cut short
      fc.integer({ min: 0xa0, max: 0xbf }).map((b) => [0xed, b, 0x80]), // a surrogate (CESU-8)
      fc.integer({ min: 0x90, max: 0xbf }).map((b) => [0xf4, b, 0x80, 0x80]), // past U+10FFFF
      fc.integer({ min: 0xf5, max: 0xff }).map((b) => [b]), // never in UTF-8
    )
    const TOKEN = 'NOT-UTF8-HERE'
    await fc.assert(
      fc.asyncProperty(bodiesAndTargets, notUtf8, async ([body, target], bytes) => {
        const marked = withText(body, target, (s) => `${s}${TOKEN}`)
        const [before, after, ...more] = JSON.stringify(marked).split(TOKEN)
        expect(more).toEqual([])
        const prefix = Buffer.from(before!, 'utf8')
        const payload = Buffer.concat([prefix, Buffer.from(bytes), Buffer.from(after!, 'utf8')])
        const res = await postCapture(pipeline.app, apiKey, payload, { 'content-type': 'application/json' })
        expect(res.statusCode, res.body).toBe(400)
        const path = target.isKey
          ? pointer([
              ...target.path.slice(0, -1),
              `${target.path.at(-1)}\udc80${'\ufffd'.repeat(bytes.length - 1)}`,
            ])
          : pointer(target.path)
        expect(res.json().error).toEqual({
          code: 'invalid_request',
          message: `The request body must be UTF-8 (RFC 8259): byte ${prefix.length} does not start a valid UTF-8 sequence.`,
          details: [{ path, message: `not valid UTF-8 (byte ${prefix.length})`, in: 'body' }],
        })
      }),
      { numRuns: 50 },
    )
    expect(await stored()).toEqual(before)
  })
})

/** The key that replaced the target key in `body` (the only one of its object that is not well-formed). */
function keyAfter(body: Record<string, unknown>, target: { path: (string | number)[] }): string {
  const parent = target.path.slice(0, -1).reduce<Node>((node, step) => node[step] as Node, body as Node)
  return Object.keys(parent).find((k) => !k.isWellFormed())!
}
