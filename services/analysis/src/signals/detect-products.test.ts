/**
 * What detectSignals computes, counted: the dot products of the repetition rule. A later request is
 * compared with each message between it and an earlier one; those similarities were computed again for
 * every earlier request, so a long conversation's detection grew with the cube of its length (bench/FINDINGS.md,
 * "The 0.3 ms per message (perfreg)"). The results are the same either way: detect.test.ts.
 */
import { beforeEach, expect, it, vi } from 'vitest'
import { dot } from '../topics/vectors.ts'
import { type ConversationMessage, detectSignals } from './detect.ts'

vi.mock('../topics/vectors.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../topics/vectors.ts')>()
  return { ...original, dot: vi.fn(original.dot) }
})

beforeEach(() => {
  vi.mocked(dot).mockClear()
})

const unit = (...v: number[]) => Float32Array.from(v)

it("computes a later request's similarity to each assistant message before it once, however many earlier requests it is compared with", () => {
  // Four requests asking the same thing, an answer between each: every pair of requests is compared
  // (similarity 1) and every pair reads the answers between them.
  const roles = ['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user'] as const
  const messages: ConversationMessage[] = roles.map((role, i) => ({
    id: `m${i}`,
    role,
    sentAt: new Date(Date.UTC(2026, 10, 30, 12, i)),
    vector: role === 'user' ? unit(1, 0) : unit(0, 1),
  }))
  const { signals } = detectSignals(
    messages,
    { disabled: new Set(), custom: [], quietPeriodMs: 30 * 60_000 },
    new Date(Date.UTC(2026, 10, 30, 13)),
  )
  expect(signals.find((s) => s.name === 'repetition')?.evidence).toEqual([
    'm0',
    'm1',
    'm2',
    'm3',
    'm4',
    'm5',
    'm6',
  ])

  const assistants = new Set(messages.filter((m) => m.role === 'assistant').map((m) => m.vector))
  const requests = new Set(messages.filter((m) => m.role === 'user').map((m) => m.vector))
  const products = new Map<string, number>()
  for (const [a, b] of vi.mocked(dot).mock.calls) {
    if (!assistants.has(a) || !requests.has(b)) continue
    const key = `${messages.findIndex((m) => m.vector === a)}·${messages.findIndex((m) => m.vector === b)}`
    products.set(key, (products.get(key) ?? 0) + 1)
  }
  // m5 lies between m6 and each of the three requests before it: read three times before, once now.
  expect(Object.fromEntries(products)).toEqual({
    '1·2': 1,
    '1·4': 1,
    '3·4': 1,
    '1·6': 1,
    '3·6': 1,
    '5·6': 1,
  })
  // In all: the 6 pairs of requests; 9 with the messages between (the 6 above, and m2 with m4 and m6, m4
  // with m6); the 3 pairs of answers (the assistant saying the same again).
  expect(dot).toHaveBeenCalledTimes(6 + 9 + 3)
})
