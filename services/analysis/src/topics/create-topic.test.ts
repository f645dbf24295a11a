import { describe, expect, it } from 'vitest'
import { addTopic } from '../../test/topic-fixtures.ts'
import { seededRandom } from '../seeded-random.ts'
import { decideTopicCreation } from './create-topic.ts'
import type { WindowPoint } from './recluster.ts'
import { emptyTopicState, OTHER_TOPIC, type TopicState } from './topic-model.ts'
import { normalized } from './vectors.ts'

// Given a chatbot's topics and window of synthetic requests (each request a direction of its own in 16
// dimensions, its paraphrases that direction plus seeded noise), when an owner creates a topic from
// examples of one request, then the requests clearly nearer it move into it, and no others.
const DIM = 16
const id = (k: number) => `00000000-0000-4000-9000-${String(k).padStart(12, '0')}`

function paraphrase(k: number, n: number): Float32Array {
  const random = seededRandom(1_000 * k + n)
  const v = new Float32Array(DIM)
  for (let i = 0; i < DIM; i++) v[i] = (random() - 0.5) * 0.3
  v[k]! += 1
  return normalized(v)
}

function requests(k: number, n: number, topicId: string, from = 0): WindowPoint[] {
  return Array.from({ length: n }, (_, i) => ({
    conversationId: `c-${k}-${from + i}`,
    messageId: 'm',
    embedding: paraphrase(k, from + i),
    terms: [`word${k}`],
    topicId,
  }))
}

/** A state whose topics hold the given window points (by their topicId). */
function stateOf(topicIds: string[], window: WindowPoint[], flags: { pinned?: string } = {}): TopicState {
  const state = emptyTopicState('bot')
  for (const t of topicIds) {
    const members = window.filter((p) => p.topicId === t)
    addTopic(state, t, `label ${t.slice(-2)}`, members, {
      pinned: flags.pinned === t,
      terms: new Map([[`word${t}`, members.length]]),
    })
  }
  return state
}

const examples = (k: number) =>
  Array.from({ length: 4 }, (_, i) => ({ embedding: paraphrase(k, 500 + i), terms: [`word${k}`, 'example'] }))

describe('creating a topic from examples (pure)', () => {
  it('moves the waiting requests like the examples, and no distinct ones; the label is pinned', () => {
    const window = [...requests(1, 8, id(1)), ...requests(2, 8, id(2)), ...requests(3, 3, OTHER_TOPIC)]
    const state = stateOf([id(1), id(2)], window)
    const created = decideTopicCreation(
      state,
      { topicId: id(9), label: 'Roadside', examples: examples(3) },
      window,
    )
    expect(created.ok).toBe(true)
    if (!created.ok) return
    // Inside the new topic's spread (mean − 1 sd of the examples' similarities, shrunk toward the
    // chatbot's): most of the waiting paraphrases, and only those.
    const moved = created.decision.reassigned.map((r) => r.conversationId)
    expect(moved.length).toBeGreaterThanOrEqual(2)
    expect(moved.every((c) => c.startsWith('c-3-'))).toBe(true)
    expect(created.decision.reassigned.every((r) => r.topicId === id(9))).toBe(true)
    expect(created.event).toMatchObject({
      type: 'analysis.topic-created-by-user',
      payload: { topicId: id(9), label: 'Roadside', examples: 4 },
    })
    const topic = state.topics.get(id(9))!
    expect(topic).toMatchObject({ pinned: true, label: 'Roadside', size: 4 + moved.length })
  })

  it("takes a topic's requests only when they lie nearer the examples than their own topic", () => {
    // Topic 1 holds requests of kind 1 and, wrongly, three of kind 3.
    const window = [...requests(1, 8, id(1)), ...requests(3, 3, id(1)), ...requests(2, 8, id(2))]
    const state = stateOf([id(1), id(2)], window)
    const created = decideTopicCreation(
      state,
      { topicId: id(9), label: 'Three', examples: examples(3) },
      window,
    )
    if (!created.ok) throw new Error(created.reason)
    expect(created.decision.reassigned.map((r) => r.conversationId).sort()).toEqual([
      'c-3-0',
      'c-3-1',
      'c-3-2',
    ])
    // They left topic 1's sums.
    expect(state.topics.get(id(1))!.size).toBe(8)
    expect(created.decision.changedTopics).toEqual(new Set([id(9), id(1)]))
  })

  it("leaves a merged-away topic's requests where a user's merge put them: the topic merged into is pinned", () => {
    // trial2: "card decline" merged into "refund", then "Card declined" created from card requests moved
    // none of them. They count in the topic merged into, which the merge pinned, and pinned topics keep
    // their members (docs/analysis.md); the command's outcome says how many moved (0 here).
    const window = [...requests(1, 8, id(1)), ...requests(3, 3, id(2)), ...requests(2, 8, id(4))]
    const merged = (pinned: boolean) => {
      const state = emptyTopicState('bot')
      addTopic(state, id(1), 'refund', [...requests(1, 8, id(1)), ...requests(3, 3, id(2))], { pinned })
      addTopic(state, id(2), 'card decline', requests(3, 3, id(2)), { mergedInto: id(1) })
      addTopic(state, id(4), 'delivery', requests(2, 8, id(4)))
      return decideTopicCreation(
        state,
        { topicId: id(9), label: 'Card declined', examples: examples(3) },
        window,
      )
    }
    const pinned = merged(true)
    if (!pinned.ok) throw new Error(pinned.reason)
    expect(pinned.decision.reassigned).toEqual([])
    // The pin alone keeps them: the same topics unpinned give them up.
    const unpinned = merged(false)
    if (!unpinned.ok) throw new Error(unpinned.reason)
    expect(unpinned.decision.reassigned.map((r) => r.conversationId).sort()).toEqual([
      'c-3-0',
      'c-3-1',
      'c-3-2',
    ])
  })

  it('leaves pinned topics their members, and refuses a taken label, a known id and too few examples', () => {
    const window = [...requests(1, 8, id(1)), ...requests(3, 3, id(2))]
    const state = stateOf([id(1), id(2)], window, { pinned: id(2) })
    const created = decideTopicCreation(
      state,
      { topicId: id(9), label: 'Three', examples: examples(3) },
      window,
    )
    if (!created.ok) throw new Error(created.reason)
    expect(created.decision.reassigned).toEqual([])
    const again = stateOf([id(1)], window)
    expect(
      decideTopicCreation(again, { topicId: id(8), label: 'LABEL 01', examples: examples(3) }, []),
    ).toEqual({
      ok: false,
      reason: 'label_taken',
    })
    // The same label in full-width letters, as the gateway compares labels (NFKC, case aside).
    expect(
      decideTopicCreation(again, { topicId: id(8), label: 'ＬＡＢＥＬ ０１', examples: examples(3) }, []),
    ).toEqual({ ok: false, reason: 'label_taken' })
    expect(decideTopicCreation(again, { topicId: id(1), label: 'New', examples: examples(3) }, [])).toEqual({
      ok: false,
      reason: 'exists',
    })
    expect(
      decideTopicCreation(again, { topicId: id(8), label: 'New', examples: examples(3).slice(0, 1) }, []),
    ).toEqual({ ok: false, reason: 'too_few_examples' })
  })
})
