/**
 * busy-day.ts's burst: conversations generated from CLINC150's test split and DSTC11's development set with this
 * script's own replies, thanks and complaints, and the requests that send them, bad input and oddities mixed in.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { seededRandom, seededShuffle } from '../../support/random.ts'
import type { Capture, Ledger, Message } from './state.ts'

const ROOT = path.resolve(import.meta.dirname, '../../..')
const DATA = path.resolve(ROOT, '../shared/data')

function loadRequests(): { clinc: string[]; dstc: string[] } {
  const clinc = (
    JSON.parse(readFileSync(path.join(DATA, 'clinc150/data_full.json'), 'utf8')).test as [string, string][]
  ).map(([text]) => text)
  const dstc = readFileSync(path.join(DATA, 'dstc11/development.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { utterance: string }).utterance)
  return { clinc, dstc }
}

const REPLIES = [
  'Sure, I can help with that. Here is what you need to do.',
  'I have looked that up for you: it is done, you will get a confirmation shortly.',
  "Sorry, I didn't quite get that. Could you rephrase?",
  "That's beyond what I can help with here.",
  'I have passed this to a colleague, who will email you today.',
  'Here is the information you asked for.',
]
const THANKS = ['Thanks, that sorted it.', 'Perfect, thank you!', 'Great, that is exactly what I needed.']
const COMPLAINTS = [
  "That doesn't answer my question.",
  'This is useless, I want to talk to a person.',
  'You said that already. Not helpful at all.',
]

export function generate(n: number, seed: number): Capture[] {
  const { clinc, dstc } = loadRequests()
  const random = seededRandom(seed)
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!
  const clincOrder = seededShuffle(clinc, seed)
  const dstcOrder = seededShuffle(dstc, seed + 1)
  const now = Date.now()
  const out: Capture[] = []
  for (let c = 0; c < n; c++) {
    const fromDstc = random() < 0.4
    const source = fromDstc ? dstcOrder : clincOrder
    const length = 2 + Math.floor(random() * 5)
    const ending = random()
    const start = now - Math.floor(random() * 3 * 3600_000) - 600_000
    const messages: Message[] = []
    for (let i = 0; i < length; i++) {
      const role = i % 2 === 0 ? 'user' : 'assistant'
      let content: string
      if (role === 'assistant') content = pick(REPLIES)
      else if (i === 0) content = source[(c * 3) % source.length]!
      else if (i >= 2 && ending < 0.2) content = pick(THANKS)
      else if (i >= 2 && ending < 0.35) content = pick(COMPLAINTS)
      else content = source[(c * 3 + i) % source.length]!
      messages.push({ id: `m${i}`, role, content, sentAt: new Date(start + i * 20_000).toISOString() })
    }
    out.push({
      conversationId: `busy-${seed}-${c}`,
      messages,
      user: { id: `user-${Math.floor(random() * 1500)}` },
    })
  }
  return out
}

export type Request = {
  kind: string
  conversationId: string
  body: string
  contentType?: string
  key?: string
  ids: string[] // the message ids a 2xx acknowledges
  expect: number
}

function captureRequest(kind: string, capture: Capture, expect = 200): Request {
  return {
    kind,
    conversationId: capture.conversationId,
    body: JSON.stringify(capture),
    ids: capture.messages.map((m) => m.id),
    expect,
  }
}

/** The burst's requests, in sending order: good captures with bad input and oddities mixed in. */
export function plan(captures: Capture[], badShare: number, seed: number, ledger: Ledger): Request[][] {
  const random = seededRandom(seed + 2)
  const perConversation: Request[][] = []
  const badKinds = [
    'invalid-json',
    'wrong-key',
    'oversize',
    'content-too-long',
    'too-many',
    'bad-role',
    'text-plain',
  ]
  let bad = 0
  for (const capture of captures) {
    const requests: Request[] = []
    const roll = random()
    if (roll < 0.1 && capture.messages.length >= 4) {
      // Timestamps out of order: the later half first, then the earlier half.
      const half = Math.floor(capture.messages.length / 2)
      requests.push(
        captureRequest('later-half-first', { ...capture, messages: capture.messages.slice(half) }),
      )
      requests.push(
        captureRequest('earlier-half-second', { ...capture, messages: capture.messages.slice(0, half) }),
      )
      ledger.reversed.push(capture.conversationId)
    } else if (roll < 0.3) {
      const half = Math.ceil(capture.messages.length / 2)
      requests.push(captureRequest('first-half', { ...capture, messages: capture.messages.slice(0, half) }))
      requests.push(captureRequest('second-half', { ...capture, messages: capture.messages.slice(half) }))
    } else requests.push(captureRequest('whole', capture))
    if (random() < badShare) {
      // Accepted oddities: the same conversation sent again, and a request repeating a message id.
      requests.push(captureRequest('sent-again', capture))
      const twice = { ...capture.messages[0]!, content: `${capture.messages[0]!.content} (edited)` }
      requests.push(
        captureRequest('duplicate-id-in-request', { ...capture, messages: [capture.messages[0]!, twice] }),
      )
    }
    if (random() < badShare) {
      const kind = badKinds[bad++ % badKinds.length]!
      const id = `bad-${kind}-${bad}`
      ledger.badConversationIds.push(id)
      const good: Capture = { conversationId: id, messages: capture.messages }
      const request: Request = { kind, conversationId: id, body: JSON.stringify(good), ids: [], expect: 400 }
      if (kind === 'invalid-json') request.body = request.body.slice(0, -7)
      else if (kind === 'wrong-key') {
        request.key = `svc_live_${'0'.repeat(31)}${bad % 10}`
        request.expect = 401
      } else if (kind === 'oversize') {
        const big = 'x'.repeat(30_000)
        request.body = JSON.stringify({
          conversationId: id,
          messages: Array.from({ length: 100 }, (_, i) => ({
            id: `o${i}`,
            role: 'user',
            content: `${big}${i}`,
          })),
          padding: 'y'.repeat(1_500_000),
        })
        request.expect = 413
      } else if (kind === 'content-too-long')
        request.body = JSON.stringify({
          conversationId: id,
          messages: [{ id: 'l', role: 'user', content: 'z'.repeat(32_769) }],
        })
      else if (kind === 'too-many')
        request.body = JSON.stringify({
          conversationId: id,
          messages: Array.from({ length: 101 }, (_, i) => ({ id: `t${i}`, role: 'user', content: 'hello' })),
        })
      else if (kind === 'bad-role')
        request.body = JSON.stringify({
          conversationId: id,
          messages: [{ id: 'r', role: 'customer', content: 'hi' }],
        })
      else {
        request.contentType = 'text/plain'
        request.expect = 415
      }
      requests.push(request)
    }
    perConversation.push(requests)
  }
  return perConversation
}
