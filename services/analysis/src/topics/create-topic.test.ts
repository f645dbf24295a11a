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
function stateOf(topicIds: string[], window: WindowPoint[]): TopicState {
  const state = emptyTopicState('bot')
  for (const t of topicIds) {
    const members = window.filter((p) => p.topicId === t)
    addTopic(state, t, `label ${t.slice(-2)}`, members, {
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

  it("takes a merged-away topic's requests from the topic a user merged it into (pinned); a configured one keeps them", () => {
    // trial2 and fix3: "card decline" merged into "refund" (which the merge pinned), then "Card declined"
    // created from card requests moved none of them, because pinned topics kept their members. A creation
    // is a user's later, explicit act: it takes them from a pinned topic as from any other.
    const window = [...requests(1, 8, id(1)), ...requests(3, 3, id(2)), ...requests(2, 8, id(4))]
    const merged = (fields: { pinned?: boolean; configured?: boolean }) => {
      const state = emptyTopicState('bot')
      addTopic(state, id(1), 'refund', [...requests(1, 8, id(1)), ...requests(3, 3, id(2))], fields)
      addTopic(state, id(2), 'card decline', requests(3, 3, id(2)), { mergedInto: id(1) })
      addTopic(state, id(4), 'delivery', requests(2, 8, id(4)))
      const created = decideTopicCreation(
        state,
        { topicId: id(9), label: 'Card declined', examples: examples(3) },
        window,
      )
      if (!created.ok) throw new Error(created.reason)
      return { created, refund: state.topics.get(id(1))! }
    }
    const pinned = merged({ pinned: true })
    expect(pinned.created.decision.reassigned.map((r) => r.conversationId).sort()).toEqual([
      'c-3-0',
      'c-3-1',
      'c-3-2',
    ])
    // They leave the pinned topic's sums; it stays pinned (re-clustering still never undoes the merge).
    expect(pinned.refund.size).toBe(8)
    expect(pinned.refund.pinned).toBe(true)
    expect(pinned.created.decision.changedTopics).toEqual(new Set([id(9), id(1)]))
    // The chatbot's own topics (settings.topics) still keep theirs.
    expect(merged({ configured: true }).created.decision.reassigned).toEqual([])
  })

  it('takes requests from a hidden topic and from a pinned one, never from a configured one', () => {
    // Topic 1 holds requests of kind 1 and, wrongly, three of kind 3.
    const window = [...requests(1, 8, id(1)), ...requests(3, 3, id(1)), ...requests(2, 8, id(2))]
    const moved = (fields: { pinned?: boolean; hidden?: boolean; configured?: boolean }) => {
      const state = emptyTopicState('bot')
      addTopic(state, id(1), 'one', [...requests(1, 8, id(1)), ...requests(3, 3, id(1))], fields)
      addTopic(state, id(2), 'two', requests(2, 8, id(2)))
      const created = decideTopicCreation(
        state,
        { topicId: id(9), label: 'Three', examples: examples(3) },
        window,
      )
      if (!created.ok) throw new Error(created.reason)
      return created.decision.reassigned.map((r) => r.conversationId).sort()
    }
    const all = ['c-3-0', 'c-3-1', 'c-3-2']
    expect(moved({})).toEqual(all)
    expect(moved({ hidden: true })).toEqual(all)
    expect(moved({ pinned: true })).toEqual(all)
    expect(moved({ pinned: true, hidden: true })).toEqual(all)
    expect(moved({ configured: true })).toEqual([])
  })

  it('refuses a taken label, a known id and too few examples', () => {
    const window = [...requests(1, 8, id(1)), ...requests(3, 3, id(2))]
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
