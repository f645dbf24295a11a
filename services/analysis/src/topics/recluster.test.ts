import { describe, expect, it } from 'vitest'
import { addTopic } from '../../test/topic-fixtures.ts'
import { seededRandom } from '../seeded-random.ts'
import { poolClusters } from './agglomerative.ts'
import { byContent, clusteringInput, decideRecluster, type WindowPoint } from './recluster.ts'
import { decideTopics, emptyTopicState, OTHER_TOPIC, type TopicState } from './topic-model.ts'
import { normalized } from './vectors.ts'
import { windowClusters } from './window-clusters.ts'

// Given a state and a window of synthetic requests (each request a direction of its own in 16
// dimensions, its paraphrases that direction plus a little seeded noise), when the window is re-clustered
// (the real clustering: UMAP + HDBSCAN, window-clusters.ts, or where said a given one), then the topics
// keep, split, merge or retire as said.
const DIM = 16

function paraphrase(k: number, n: number): Float32Array {
  const random = seededRandom(1_000 * k + n)
  const v = new Float32Array(DIM)
  for (let i = 0; i < DIM; i++) v[i] = (random() - 0.5) * 0.3
  v[k]! += 1
  return normalized(v)
}

const id = (k: number) => `00000000-0000-4000-9000-${String(k).padStart(12, '0')}`

/** `n` paraphrases of request k, stored in topic `topicId`. */
function requests(k: number, n: number, topicId: string): WindowPoint[] {
  return Array.from({ length: n }, (_, i) => ({
    conversationId: `c-${k}-${i}-${topicId}`,
    messageId: 'm',
    embedding: paraphrase(k, i),
    terms: [`word${k}`, `term${k}`],
    topicId,
  }))
}

/** A state whose topics hold the given window points (by their topicId), oldest first. */
function stateOf(topicIds: string[], window: WindowPoint[]): TopicState {
  const state = emptyTopicState('bot')
  for (const t of topicIds) {
    const members = window.filter((p) => p.topicId === t)
    addTopic(state, t, `label of ${t.slice(-2)}`, members, { terms: new Map([[`word${t}`, members.length]]) })
  }
  return state
}

/** Re-clusters the window: by the real clustering, or by the cluster number `given` each point (−1: noise). */
function recluster(state: TopicState, window: WindowPoint[], given?: (p: WindowPoint) => number) {
  const { points, references } = clusteringInput(state, window)
  let next = 100
  return decideRecluster(
    state,
    points,
    given
      ? points.map(given)
      : windowClusters(
          points.map((p) => p.embedding),
          references,
        ),
    { newId: () => id(next++) },
  )
}

describe('re-clustering a window (issue 31)', () => {
  it('keeps the ids and labels of topics that persist, and moves nothing', () => {
    const window = [...requests(0, 10, id(1)), ...requests(1, 10, id(2)), ...requests(2, 10, id(3))]
    const state = stateOf([id(1), id(2), id(3)], window)
    const decision = recluster(state, window)
    expect(decision.events).toEqual([])
    expect(decision.reassigned).toEqual([])
    expect([...state.topics.values()].map((t) => [t.id, t.label, t.mergedInto, t.retired])).toEqual([
      [id(1), 'label of 01', null, false],
      [id(2), 'label of 02', null, false],
      [id(3), 'label of 03', null, false],
    ])
  })

  it('splits an early topic that absorbed a later, distinct request: the id stays on the larger part', () => {
    const window = [...requests(0, 12, id(1)), ...requests(3, 8, id(1)), ...requests(6, 10, id(2))]
    const state = stateOf([id(1), id(2)], window)
    const decision = recluster(state, window)
    const newId = id(100)
    expect(decision.events.map((e) => e.type)).toEqual(['analysis.topic-discovered', 'analysis.topic-split'])
    expect(decision.events[1]!.payload).toEqual({ topicId: id(1), into: [newId] })
    expect(decision.reassigned.map((r) => r.topicId)).toEqual(Array(8).fill(newId))
    expect(decision.reassigned.map((r) => r.conversationId).sort()).toEqual(
      requests(3, 8, id(1))
        .map((p) => p.conversationId)
        .sort(),
    )
    expect(state.topics.get(id(1))!.size).toBe(12)
    expect(state.topics.get(id(1))!.label).toBe('label of 01')
    expect(state.topics.get(newId)!.size).toBe(8)
    expect(state.topics.get(newId)!.label).not.toBe('label of 01')

    // Then a later message of the absorbed request no longer joins the early topic.
    const later = {
      conversationId: 'later',
      messageId: 'm',
      embedding: paraphrase(3, 20),
      terms: ['word3'],
      text: '',
    }
    const placed = decideTopics(state, [later], [], {
      newId: () => id(200),
      cluster: async (v, r) => poolClusters(v, r),
    })
    return placed.then((d) => expect(d.assigned.get('later\u0000m')).toBe(newId))
  })

  it('splits an absorbed request off with UMAP + HDBSCAN too (a window of 100: the density path)', () => {
    const window = [...requests(0, 40, id(1)), ...requests(3, 30, id(1)), ...requests(6, 30, id(2))]
    const state = stateOf([id(1), id(2)], window)
    const decision = recluster(state, window)
    expect(decision.events.map((e) => e.type)).toEqual(['analysis.topic-discovered', 'analysis.topic-split'])
    expect(decision.events[1]!.payload).toEqual({ topicId: id(1), into: [id(100)] })
    expect(new Set(decision.reassigned.map((r) => r.topicId))).toEqual(new Set([id(100)]))
    expect(state.topics.get(id(1))!.size).toBe(40)
    expect(state.topics.get(id(2))!.size).toBe(30)
  })

  it("names a kept topic by its present members' words: keywords of those who left are replaced", () => {
    // Topic 1 was labelled while it held requests 0 and 3; request 3 splits off, and no member of the
    // kept part says word3 or term3 any more.
    const window = [...requests(0, 12, id(1)), ...requests(3, 8, id(1)), ...requests(6, 10, id(2))]
    for (const [label, kept] of [
      ['word0, term0', true],
      ['word0, word3', false],
    ] as const) {
      const state = emptyTopicState('bot')
      addTopic(state, id(1), label, window.slice(0, 20), { keywords: ['word0', 'word3', 'term0', 'term3'] })
      addTopic(state, id(2), 'word6, term6', window.slice(20), { keywords: ['word6', 'term6'] })
      const decision = recluster(state, window)
      const topic = state.topics.get(id(1))!
      expect(topic.size).toBe(12)
      expect(new Set(topic.keywords)).toEqual(new Set(['word0', 'term0']))
      if (kept) expect(topic.label).toBe('word0, term0')
      else expect(topic.label.split(', ').sort()).toEqual(['term0', 'word0'])
      expect(decision.events).toContainEqual({
        type: 'analysis.topic-relabeled',
        payload: { topicId: id(1), label: topic.label, keywords: topic.keywords },
      })
      // Topic 2's members and keywords are as they were: nothing to announce.
      expect(decision.events.filter((e) => 'topicId' in e.payload && e.payload.topicId === id(2))).toEqual([])
    }
  })

  it('merges two topics of one request into the older, by an event; nothing of the older moves', () => {
    const window = [...requests(0, 10, id(1)), ...requests(0, 6, id(2)), ...requests(5, 10, id(3))]
    const state = stateOf([id(1), id(2), id(3)], window)
    const decision = recluster(state, window)
    expect(decision.events).toEqual([
      { type: 'analysis.topic-merged', payload: { topicId: id(2), into: id(1) } },
    ])
    expect(decision.reassigned).toEqual([])
    expect(state.topics.get(id(2))!.mergedInto).toBe(id(1))
    expect(state.topics.get(id(1))!.size).toBe(16)
  })

  it('leaves a pinned topic (renamed or merged into by a user) and its members as they are', () => {
    // The same window that splits an unpinned topic (above): pinned, it keeps both requests and its label.
    const window = [...requests(0, 12, id(1)), ...requests(3, 8, id(1)), ...requests(6, 10, id(2))]
    const state = stateOf([id(1), id(2)], window)
    state.topics.get(id(1))!.pinned = true
    state.topics.get(id(1))!.label = 'Named by hand'
    const decision = recluster(state, window)
    expect(decision.events).toEqual([])
    expect(decision.reassigned).toEqual([])
    expect(state.topics.get(id(1))).toMatchObject({ label: 'Named by hand', size: 20, mergedInto: null })
    // Also when the user pinned it after the window was clustered.
    const later = stateOf([id(1), id(2)], window)
    const { points, references } = clusteringInput(later, window)
    const numbers = windowClusters(
      points.map((p) => p.embedding),
      references,
    )
    later.topics.get(id(1))!.pinned = true
    expect(decideRecluster(later, points, numbers, { newId: () => id(300) }).events).toEqual([])
  })

  it('retires a topic whose members are all noise; its messages wait in "other"', () => {
    // A given clustering: UMAP draws lone messages toward their nearest group, so the real one may not
    // leave them out; HDBSCAN's noise is hdbscan.test.ts's.
    const scattered: WindowPoint[] = [7, 9, 11].map((k) => ({ ...requests(k, 1, id(2))[0]! }))
    const window = [...requests(0, 10, id(1)), ...scattered, ...requests(4, 10, id(3))]
    const state = stateOf([id(1), id(2), id(3)], window)
    const decision = recluster(state, window, (p) => (p.topicId === id(1) ? 0 : p.topicId === id(3) ? 1 : -1))
    expect(decision.events).toEqual([{ type: 'analysis.topic-retired', payload: { topicId: id(2) } }])
    expect(state.topics.get(id(2))!.retired).toBe(true)
    expect(decision.reassigned.map((r) => r.topicId)).toEqual([OTHER_TOPIC, OTHER_TOPIC, OTHER_TOPIC])
    // In the window's own order: by embedding.
    expect(state.pool.map((p) => p.conversationId)).toEqual(
      [...scattered].sort(byContent).map((p) => p.conversationId),
    )
  })

  it('is deterministic: the same state and window give the same topics, events and moves', () => {
    const window = [...requests(0, 12, id(1)), ...requests(3, 8, id(1)), ...requests(6, 9, OTHER_TOPIC)]
    const once = recluster(stateOf([id(1)], window), window)
    const twice = recluster(stateOf([id(1)], window), window)
    expect(once.events).toEqual(twice.events)
    expect(once.reassigned).toEqual(twice.reassigned)
    expect(once.summary).toEqual({
      clustered: 29,
      topics: 3,
      kept: 1,
      created: 2,
      merged: 0,
      retired: 0,
      split: 1,
    })
  })

  it("is a function of the window's texts: the same requests in another order, or under other ids, give the same topics", () => {
    // Requests that lie close (each between two directions), so that a clustering that follows its
    // rows' order (UMAP's seeded sampling, ties) cuts them differently in different orders.
    const random = seededRandom(7)
    const window: WindowPoint[] = Array.from({ length: 120 }, (_, i) => {
      const k = i % 6
      const mix = random()
      const v = new Float32Array(DIM)
      for (let d = 0; d < DIM; d++) v[d] = (random() - 0.5) * 0.6
      v[k]! += 1 - mix
      v[k + 1]! += mix
      return {
        conversationId: id(1_000 + i),
        messageId: `m${i % 3}`,
        embedding: normalized(v),
        terms: [`word${k}`, `term${k + (mix > 0.5 ? 1 : 0)}`, `extra${i % 5}`],
        topicId: OTHER_TOPIC,
      }
    })
    const shuffled = [...window]
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!]
    }
    // The same texts captured again: every conversation under another id (random, as the gateway's),
    // in an order unrelated to the first ids'; mapped back to the first ids to compare.
    const firstId = new Map<string, string>()
    const recaptured = window.map((p) => {
      const other = `${Math.floor(random() * 1e9)}`.padStart(9, '0') + p.conversationId
      firstId.set(other, p.conversationId)
      return { ...p, conversationId: other }
    })
    const topics = (w: WindowPoint[]) => {
      const state = emptyTopicState('bot')
      const decision = recluster(state, w)
      const members = new Map<string, string[]>()
      for (const r of decision.reassigned) {
        const c = firstId.get(r.conversationId) ?? r.conversationId
        members.set(r.topicId, [...(members.get(r.topicId) ?? []), c])
      }
      return [...state.topics.values()]
        .filter((t) => t.mergedInto === null && !t.retired)
        .map((t) => ({ members: (members.get(t.id) ?? []).sort(), label: t.label, keywords: t.keywords }))
        .sort((a, b) => (a.members[0]! < b.members[0]! ? -1 : 1))
    }
    const inOrder = topics(window)
    expect(inOrder.length).toBeGreaterThan(1)
    expect(topics(shuffled)).toEqual(inOrder)
    expect(topics([...window].reverse())).toEqual(inOrder)
    expect(topics(recaptured)).toEqual(inOrder)
  })
})
