import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { seededRandom } from '../support/random.ts'
import { BOILERPLATE, conversationOf, GREETINGS, loadSet } from './datasets.ts'

const DATA = path.resolve(import.meta.dirname, '../../../shared/data')

describe('the development sets', () => {
  it('reads DSTC11 development (913 requests, 22 intents) in a shuffled order the seed repeats', () => {
    const a = loadSet('dstc11', DATA, { seed: 1 })
    expect(a.requests).toHaveLength(913)
    expect(new Set(a.requests.map((r) => r.intent)).size).toBe(22)
    expect(loadSet('dstc11', DATA, { seed: 1 }).requests).toEqual(a.requests)
    // Shuffled: the file is grouped by intent, the order of arrival is not.
    expect(new Set(a.requests.slice(0, 40).map((r) => r.intent)).size).toBeGreaterThan(5)
  })

  it("reads CLINC150's test split, 30 queries of each of 150 intents", () => {
    const set = loadSet('clinc150', DATA, { seed: 1 })
    expect(set.requests).toHaveLength(4500)
    expect(new Set(set.requests.map((r) => r.intent)).size).toBe(150)
    expect(loadSet('clinc150', DATA, { seed: 1, limit: 10 }).requests).toEqual(set.requests.slice(0, 10))
  })
})

describe('conversationOf', () => {
  it('opens a share of the conversations with a greeting and states the request second', () => {
    const random = seededRandom(5)
    const conversations = Array.from({ length: 1000 }, (_, i) =>
      conversationOf('cancel my plan', i, { greetingShare: 0.3, random }),
    )
    const greeted = conversations.filter((c) => c.length === 4)
    expect(greeted.length / 1000).toBeGreaterThan(0.25)
    expect(greeted.length / 1000).toBeLessThan(0.35)
    for (const c of greeted) {
      expect(GREETINGS).toContain(c[0]!.content)
      expect(c.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
      expect(c[2]!.content).toBe('cancel my plan')
    }
    for (const c of conversations) expect(BOILERPLATE).toContain(c.at(-1)!.content)
  })
})
