import { describe, expect, it } from 'vitest'
import { addTopic } from '../../test/topic-fixtures.ts'
import { poolClusters } from './agglomerative.ts'
import {
  type ConfiguredTopic,
  DEFAULT_TOPIC_OPTIONS,
  decideTopics,
  emptyTopicState,
  type NewPoint,
  OTHER_TOPIC,
  placedBefore,
  pointKey,
  type TopicDecision,
  type TopicModelOptions,
  type TopicState,
} from './topic-model.ts'
import { dot, normalized } from './vectors.ts'

// Given/When/Then over synthetic embeddings: each "request" is a direction of its own in 16 dimensions,
// and its paraphrases are that direction plus a little deterministic noise.
const DIM = 16

function direction(k: number): Float32Array {
  const v = new Float32Array(DIM)
  v[k] = 1
  return v
}

/** The n-th paraphrase of request k: mostly k's direction, a little of two others. */
function paraphrase(k: number, n: number): Float32Array {
  const v = direction(k)
  v[(k + 1 + (n % 3)) % DIM] = 0.25
  v[(k + 5 + (n % 4)) % DIM] = 0.15
  return normalized(v)
}

let counter = 0
function point(k: number, n: number, terms: string[] = [`word${k}`, `term${k}`], text = ''): NewPoint {
  return {
    conversationId: `c-${k}-${n}-${counter++}`,
    messageId: 'm',
    embedding: paraphrase(k, n),
    terms,
    text,
  }
}

/** A state holding topics of these members (founded together: their spread leave-one-out), oldest first. */
function stateWith(topics: Float32Array[][]) {
  const state = emptyTopicState('bot')
  const ids = topics.map((members, k) => {
    const id = `00000000-0000-4000-9000-${String(k).padStart(12, '0')}`
    const sum = new Float32Array(DIM)
    for (const m of members) for (let i = 0; i < DIM; i++) sum[i]! += m[i]!
    const spread = { count: 0, sum: 0, squares: 0 }
    for (const m of members) {
      const others = Float32Array.from(sum, (x, i) => x - m[i]!)
      const s = dot(m, normalized(others))
      spread.count++
      spread.sum += s
      spread.squares += s * s
    }
    addTopic(
      state,
      id,
      `topic ${k}`,
      members.map((embedding) => ({ embedding })),
      { spread, terms: new Map([[`word${k}`, members.length]]) },
    )
    return id
  })
  return { state, ids }
}

function deps() {
  let next = 0
  return {
    newId: () => `00000000-0000-4000-8000-${String(next++).padStart(12, '0')}`,
    cluster: async (vectors: readonly Float32Array[], references: readonly Float32Array[]) =>
      poolClusters(vectors, references),
  }
}

/** Feeds batches in order, as the worker's commits would; returns every message's final topic. */
async function given(
  batches: NewPoint[][],
  options: Partial<TopicModelOptions> = {},
  configured: ConfiguredTopic[] = [],
  state: TopicState = emptyTopicState('bot'),
  d = deps(),
) {
  const topicOf = new Map<string, string>()
  const decisions: TopicDecision[] = []
  for (const batch of batches) {
    const decision = await decideTopics(state, batch, configured, d, { ...DEFAULT_TOPIC_OPTIONS, ...options })
    decisions.push(decision)
    for (const [key, id] of decision.assigned) topicOf.set(key, id)
    for (const r of decision.reassigned) topicOf.set(pointKey(r), r.topicId)
  }
  const canonical = (id: string): string => {
    const merged = state.topics.get(id)?.mergedInto
    return merged ? canonical(merged) : id
  }
  return {
    state,
    decisions,
    topicOf: (p: NewPoint) => {
      const id = topicOf.get(pointKey(p))
      return id === undefined || id === OTHER_TOPIC ? id : canonical(id)
    },
    events: decisions.flatMap((d) => d.events),
  }
}

describe('topic discovery (pure decision)', () => {
  it('finds a topic once several messages are alike, and places its first messages in it too', async () => {
    // Beside two of another request: a lone group, with nothing to set it against, is not told from noise.
    const first = [point(0, 0), point(0, 1)]
    const another = [point(5, 0), point(5, 1)]
    const third = [point(0, 2)]
    const { topicOf, events, decisions } = await given([[...first, ...another], third])
    // Two alike messages are not yet a topic: they wait, in "other".
    expect(decisions[0]!.events).toEqual([])
    expect([...decisions[0]!.assigned.values()]).toEqual([OTHER_TOPIC, OTHER_TOPIC, OTHER_TOPIC, OTHER_TOPIC])
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ type: 'analysis.topic-discovered', payload: { configured: false } })
    const id = (events[0]!.payload as { topicId: string }).topicId
    // The third message made the topic: the two before it are moved into it by reassignment.
    expect(decisions[1]!.assigned.get(pointKey(third[0]!))).toBe(id)
    expect(decisions[1]!.reassigned.map((r) => r.topicId)).toEqual([id, id])
    for (const p of [...first, ...third]) expect(topicOf(p)).toBe(id)
  })

  it('keeps different requests apart and paraphrases together, without being told how many there are', async () => {
    const batch = [0, 1, 2, 3].flatMap((k) => [0, 1, 2, 3, 4].map((n) => point(k, n)))
    const { topicOf, state } = await given([batch])
    const topics = [0, 1, 2, 3].map(
      (k) => new Set(batch.filter((_, i) => Math.floor(i / 5) === k).map(topicOf)),
    )
    for (const t of topics) expect(t.size).toBe(1)
    expect(new Set(topics.map((t) => [...t][0])).size).toBe(4)
    expect([...state.topics.values()].filter((t) => t.mergedInto === null)).toHaveLength(4)
  })

  it('keeps topic ids stable as more batches arrive', async () => {
    const early = [point(0, 0), point(0, 1), point(0, 2), point(1, 0), point(1, 1), point(1, 2)]
    const { topicOf, events } = await given([early, [point(0, 3), point(1, 3)], [point(2, 0)], [point(0, 4)]])
    const ids = early.map(topicOf)
    const later = await given(
      [early, [point(0, 3), point(1, 3)], [point(2, 0)], [point(0, 4)], [point(0, 5), point(1, 4)]],
      {},
    )
    expect(early.map(later.topicOf)).toEqual(ids)
    expect(events.filter((e) => e.type === 'analysis.topic-discovered')).toHaveLength(2)
  })

  it('is deterministic: the same state and messages make the same topics, ids and events', async () => {
    const batches = () => [[0, 1, 2].flatMap((k) => [0, 1, 2].map((n) => point(k, n)))]
    counter = 0
    const a = await given(batches())
    counter = 0
    const b = await given(batches())
    expect(b.events).toEqual(a.events)
  })

  it('labels a topic with the words that set its messages apart from the other topics', async () => {
    const refunds = [0, 1, 2, 3].map((n) => point(0, n, ['refund', 'money back', 'order']))
    const orders = [0, 1, 2, 3].map((n) => point(1, n, ['order', 'track', 'order status']))
    const { events } = await given([[...refunds, ...orders]])
    const labels = events.map((e) => (e.payload as { label: string }).label)
    // "order", in both topics' messages, ranks after each topic's own words.
    expect(labels.find((l) => l.includes('refund'))).toMatch(/^money back, refund/)
    expect(labels.find((l) => l.includes('track'))).toMatch(/^order status, track/)
  })

  it("counts a term once per conversation: one end user's repeated words do not name the topic", async () => {
    // Regression (multi-turn traffic): an end user who says "dad" in two messages of one conversation
    // passed labelTopic's "seen in more than one message", and the topic was labelled "change, letter, dad".
    const one = (n: number, terms: string[]) => ({ ...point(0, n, terms), conversationId: 'c-dad' })
    const members = [
      one(0, ['address', 'change', 'dad']),
      one(1, ['address', 'dad', 'letter']),
      point(0, 2, ['address', 'change']),
      point(0, 3, ['address', 'change', 'letter']),
    ]
    const other = [0, 1, 2, 3].map((n) => point(1, n, ['order', 'track']))
    const { state, events } = await given([[...members, ...other]])
    const topic = [...state.topics.values()].find((t) => t.terms.has('address'))!
    expect(topic.terms.get('dad')).toBe(1)
    expect(topic.terms.get('address')).toBe(3)
    const label = events.map((e) => (e.payload as { label: string }).label).find((l) => l.includes('address'))
    expect(label).not.toMatch(/dad/)
  })

  it('never gives two topics of a chatbot the same label', async () => {
    // Regression (issue 31): two requests worded alike made two topics of one label ("question number").
    const words = ['question', 'number', 'account', 'card', 'lost']
    const cards = [0, 1, 2, 3].map((n) => point(0, n, words))
    const accounts = [0, 1, 2, 3].map((n) => point(4, n, [...words.slice(0, 3), 'open']))
    const later = [0, 1, 2, 3].map((n) => point(8, n, words))
    const { events } = await given([[...cards, ...accounts], later])
    const labels = events
      .filter((e) => e.type === 'analysis.topic-discovered' || e.type === 'analysis.topic-relabeled')
      .map((e) => (e.payload as { label: string }).label)
    expect(labels.length).toBeGreaterThanOrEqual(3)
    expect(new Set(labels).size).toBe(labels.length)
  })

  it('gives no topic to a point without terms (the analyzer gives every request some)', async () => {
    const chitChat = { ...point(0, 0), terms: [] }
    const { decisions, state } = await given([[chitChat]])
    expect(decisions[0]!.assigned.has(pointKey(chitChat))).toBe(false)
    expect(state.pool).toHaveLength(0)
  })

  it('puts the long tail in "other" once the chatbot has its maximum of topics', async () => {
    const batch = [0, 1, 2].flatMap((k) => [0, 1, 2].map((n) => point(k, n)))
    const { topicOf, state } = await given([batch], { maxTopics: 2 })
    expect([...state.topics.values()]).toHaveLength(2)
    expect(batch.filter((p) => topicOf(p) === OTHER_TOPIC)).toHaveLength(3)
  })

  it('makes a message outside a topic\'s spread wait in the pool, counted in "other", not in its nearest topic', async () => {
    const topic = [0, 1, 2, 3].map((n) => point(0, n))
    const lonely = [point(8, 0), point(11, 0)]
    // Nearer the topic than anything else (about 0.6), but far outside its paraphrases' spread (about 0.95).
    const nearby = new Float32Array(DIM)
    nearby[0] = 0.6
    nearby[14] = 0.8
    const near = { ...point(0, 9), embedding: nearby }
    const inside = point(0, 4)
    const { topicOf, state, events } = await given([
      [...topic, ...lonely],
      [near, inside],
    ])
    const id = (events[0]!.payload as { topicId: string }).topicId
    expect(topicOf(inside)).toBe(id)
    expect(topicOf(near)).toBe(OTHER_TOPIC)
    expect(state.pool.map((p) => p.conversationId)).toContain(near.conversationId)
    expect(state.pool.every((p) => p.attachedTo === OTHER_TOPIC)).toBe(true)
  })

  it('does not let an early, large topic absorb later, distinct requests near it (no snowball)', async () => {
    // One domain: later requests share a direction with the first (about 0.6 similar to it, what a fixed
    // join threshold of 0.6 took), each with paraphrases of their own.
    const near = (k: number, n: number): NewPoint => {
      const v = new Float32Array(DIM)
      v[0] = 0.6
      v[k] = 0.8
      v[(k + 1 + (n % 3)) % DIM] = 0.12
      return { ...point(k, n), embedding: normalized(v) }
    }
    const early = Array.from({ length: 30 }, (_, n) => point(0, n))
    const later = [4, 7, 10].flatMap((k) => [0, 1, 2, 3, 4].map((n) => near(k, n)))
    const { topicOf } = await given([early, later.slice(0, 8), later.slice(8)])
    const big = topicOf(early[0]!)
    for (const p of later) expect(topicOf(p)).not.toBe(big)
    const laterTopics = [4, 7, 10].map(
      (k) => new Set(later.filter((_, i) => Math.floor(i / 5) === [4, 7, 10].indexOf(k)).map(topicOf)),
    )
    for (const t of laterTopics) expect(t.size).toBe(1)
    expect(new Set(laterTopics.map((t) => [...t][0])).size).toBe(3)
  })

  it('takes its granularity from the data: the same code makes 4 topics of tight requests, 2 of spread ones', async () => {
    // Two families of two requests each; a paraphrase adds noise in a direction of its own.
    const family = (spread: number, separation: number) =>
      [0, 1, 2, 3].flatMap((r) =>
        [0, 1, 2, 3, 4, 5].map((n): NewPoint => {
          const v = new Float32Array(DIM)
          v[r < 2 ? 0 : 1] = 1
          v[2 + r] = separation
          v[6 + ((r * 6 + n) % 10)] = spread
          return { ...point(r, n), embedding: normalized(v) }
        }),
      )
    const topicsOf = async (points: NewPoint[]) => {
      const { state } = await given([points])
      return [...state.topics.values()].filter((t) => t.mergedInto === null).length
    }
    expect(await topicsOf(family(0.1, 0.6))).toBe(4)
    expect(await topicsOf(family(0.6, 0.15))).toBe(2)
  })

  it('merges a topic into an older one once their members are as similar between them as within one, by an event', async () => {
    // The younger topic's members lie around the older one's: each 0.78 similar to it, 0.61 to each other.
    const { state, ids } = stateWith([
      [0, 1, 2].map(() => direction(0)),
      [3, 4, 5].map((k) =>
        normalized(Float32Array.from(direction(0).map((x, i) => x + (i === k ? 0.8 : 0)))),
      ),
    ])
    const joining = { ...point(0, 0), embedding: direction(0) }
    const { events, topicOf } = await given([[joining]], {}, [], state)
    expect(topicOf(joining)).toBe(ids[0])
    expect(events).toEqual([{ type: 'analysis.topic-merged', payload: { topicId: ids[1], into: ids[0] } }])
    expect(state.topics.get(ids[0]!)!.size).toBe(7)
    expect(state.topics.get(ids[0]!)!.spread.count).toBe(6)
    expect(placedBefore(state, { conversationId: 'member-1-0', messageId: 'm' }, ids[1]!)).toBe(ids[0])
  })

  it("lets the chatbot's own topics win: a keyword places a message whatever its embedding", async () => {
    const configured: ConfiguredTopic = {
      id: '11111111-1111-4111-8111-111111111111',
      label: 'Refunds',
      keywords: ['refund', 'money back'],
      seed: direction(3),
    }
    const byKeyword = point(9, 0, ['want', 'refund'], 'I want a refund please')
    // Similar messages join it too, judged by the spread of the chatbot's discovered topics (here one).
    const bySimilarity = { ...point(3, 1), embedding: direction(3), text: 'give it back' }
    const { state } = stateWith([[0, 1, 2, 3].map((n) => paraphrase(0, n))])
    const { topicOf, events } = await given([[bySimilarity, byKeyword]], {}, [configured], state)
    expect(events[0]).toEqual({
      type: 'analysis.topic-discovered',
      payload: {
        topicId: configured.id,
        label: 'Refunds',
        keywords: ['refund', 'money back'],
        configured: true,
      },
    })
    expect(topicOf(byKeyword)).toBe(configured.id)
    expect(topicOf(bySimilarity)).toBe(configured.id)
    // Its label is its own: it never changes however the topic grows.
    const more = [0, 1, 2, 3, 4, 5, 6, 7].map((n) => point(3, n + 2, ['other', 'words']))
    const later = await given([more], {}, [configured], state)
    expect(later.events.filter((e) => e.type === 'analysis.topic-relabeled')).toEqual([])
    expect(state.topics.get(configured.id)!.label).toBe('Refunds')
  })

  it('keeps at most poolCapacity waiting messages, the oldest leaving first', async () => {
    const lonely = [0, 1, 2, 3, 4, 5].map((k) => point(k, 0))
    const { state, decisions } = await given([lonely], { poolCapacity: 4 })
    expect(state.pool.map((p) => p.conversationId)).toEqual(lonely.slice(2).map((p) => p.conversationId))
    expect([...decisions[0]!.removedPool.keys()]).toEqual(lonely.slice(0, 2).map(pointKey))
  })

  it('knows where a message it placed before still is: its topic, the one it merged into, or its place in the pool', async () => {
    const waiting = point(9, 0)
    const topic = [0, 1, 2].map((n) => point(0, n))
    const plain = await given([[...topic, waiting]])
    const id = plain.topicOf(topic[0]!)!
    expect(placedBefore(plain.state, topic[0]!, id)).toBe(id)
    expect(placedBefore(plain.state, waiting, OTHER_TOPIC)).toBe(OTHER_TOPIC)
    // Another model's topic, or a key phrase: not this state's; the message is placed anew.
    expect(placedBefore(plain.state, point(3, 0), 'refund')).toBeUndefined()
  })
})
