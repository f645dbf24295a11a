import { OTHER_TOPIC_ID } from '@cas/events'
import { keywordHits, type TopicMatcher, topicMatchers } from '../topic-matchers.ts'
import { labelTopic, type TermCounts, termCorpus } from './labels.ts'
import { addInto, dot, normalized, type Vector } from './vectors.ts'

/**
 * A chatbot's topics, discovered online from its end users' messages (the decision is pure: state and
 * new messages in, assignments and events out; services/analysis/src/topics/topic-store.ts reads and
 * writes the state around it).
 *
 * - A message joins the topic whose centroid (the normalized mean of its members' embeddings) is most
 *   similar, when at least `joinSimilarity` similar, and moves that centroid.
 * - A message no topic takes waits in a pool, counted as the nearest topic's when at least
 *   `attachSimilarity` similar (outlier reduction, as BERTopic's), as "other" otherwise.
 * - Each time the pool has grown by a quarter, it is clustered (average linkage, cut at
 *   `clusterSimilarity`): a cluster of `minTopicSize` or more is a new topic (or joins the topic its
 *   centroid is similar enough to), so a topic is found without being told how many there are, and
 *   only once several end users ask about it. Its members move to it: they are reassigned, by events.
 * - Topics whose centroids drift within `mergeSimilarity` of each other merge, into the older one; ids
 *   never change otherwise. Labels come from the members' words (labels.ts), and are recomputed each
 *   time a topic has doubled since its last label.
 * - The chatbot's own topics (settings.topics: label → keywords) come first: a message naming a keyword
 *   joins it whatever its embedding, and its centroid starts from the embedding of its label and keywords,
 *   so that similar messages join it too. Their labels never change, and they never merge into another.
 * - At most `maxTopics` discovered topics; past that, the pool's clusters stay in it (the long tail is
 *   "other"). The pool keeps at most `poolCapacity` messages, the oldest leaving first.
 */
export interface TopicModelOptions {
  readonly joinSimilarity: number
  readonly attachSimilarity: number
  readonly clusterSimilarity: number
  readonly mergeSimilarity: number
  readonly minTopicSize: number
  readonly maxTopics: number
  readonly poolCapacity: number
  readonly poolGrowth: number
}

/** The values chosen on CLINC150's validation split (never its test split, the benchmark's): bench/FINDINGS.md. */
export const DEFAULT_TOPIC_OPTIONS: TopicModelOptions = {
  joinSimilarity: 0.6,
  attachSimilarity: 0.5,
  clusterSimilarity: 0.4,
  mergeSimilarity: 0.8,
  minTopicSize: 3,
  maxTopics: 300,
  poolCapacity: 1_000,
  poolGrowth: 0.25,
}

/** The long tail's bucket: messages no topic is similar enough to. */
export const OTHER_TOPIC = OTHER_TOPIC_ID

export interface Topic {
  readonly id: string
  label: string
  keywords: string[]
  configured: boolean
  mergedInto: string | null
  /** Sum of the members' embeddings (and, for a configured topic, of its description's). */
  sum: Vector
  centroid: Vector
  size: number
  terms: TermCounts
  labelledAtSize: number
  /** Creation order: the older of two merging topics survives. */
  readonly seq: number
}

export interface PoolPoint {
  readonly conversationId: string
  readonly messageId: string
  readonly embedding: Vector
  readonly terms: readonly string[]
  /** The topic the message counts in while it waits: the nearest one, or OTHER_TOPIC. */
  attachedTo: string
  readonly seq: number
}

export interface TopicState {
  readonly chatbotId: string
  topics: Map<string, Topic>
  pool: PoolPoint[]
  /** Pool messages added since the pool was last clustered, and its size then. */
  addedSinceClustering: number
  poolSizeAtClustering: number
  /** The next creation sequence number. */
  seq: number
}

/** An end user's message to place: its embedding, the terms its label could use, its text for keywords. */
export interface NewPoint {
  readonly conversationId: string
  readonly messageId: string
  readonly embedding: Vector
  readonly terms: readonly string[]
  readonly text: string
}

/** One of the chatbot's own topics (settings.topics), with the embedding of its label and keywords. */
export interface ConfiguredTopic {
  readonly id: string
  readonly label: string
  readonly keywords: readonly string[]
  readonly seed: Vector
}

export type TopicEvent =
  | {
      readonly type: 'analysis.topic-discovered'
      readonly payload: { topicId: string; label: string; keywords: string[]; configured: boolean }
    }
  | {
      readonly type: 'analysis.topic-relabeled'
      readonly payload: { topicId: string; label: string; keywords: string[] }
    }
  | { readonly type: 'analysis.topic-merged'; readonly payload: { topicId: string; into: string } }

export interface Reassignment {
  readonly conversationId: string
  readonly messageId: string
  readonly topicId: string
}

export interface TopicDecision {
  /** The topic (or OTHER_TOPIC) of each new point, by pointKey; points without terms get none. */
  readonly assigned: Map<string, string>
  /** Messages placed earlier whose topic this decision changed. */
  readonly reassigned: Reassignment[]
  readonly events: TopicEvent[]
  /** What changed, for the store to write: topics, pool points added or changed, pool points removed. */
  readonly changedTopics: Set<string>
  readonly changedPool: Map<string, PoolPoint>
  readonly removedPool: Map<string, PoolPoint>
}

export interface TopicModelDeps {
  readonly newId: () => string
  /** averageLinkageClusters (agglomerative.ts), possibly run on another thread. */
  readonly cluster: (vectors: readonly Vector[], minSimilarity: number) => Promise<number[]>
}

const MAX_TERMS_KEPT = 400
const TERMS_AFTER_PRUNE = 200

export function pointKey(p: { conversationId: string; messageId: string }): string {
  return `${p.conversationId}\u0000${p.messageId}`
}

export function emptyTopicState(chatbotId: string): TopicState {
  return { chatbotId, topics: new Map(), pool: [], addedSinceClustering: 0, poolSizeAtClustering: 0, seq: 0 }
}

/**
 * Where a message placed before (its stored result names `storedTopic`) still is in this state, or
 * undefined when this state never placed it (another model's topic, a key phrase, a pool message since
 * evicted). A re-analysis with the same model leaves such a message where it is: placing it again would
 * count its embedding and its words twice.
 */
export function placedBefore(
  state: TopicState,
  point: { conversationId: string; messageId: string },
  storedTopic: string,
) {
  const pooled = state.pool.find(
    (p) => p.conversationId === point.conversationId && p.messageId === point.messageId,
  )
  if (pooled) return pooled.attachedTo
  let topic = state.topics.get(storedTopic)
  while (topic?.mergedInto) topic = state.topics.get(topic.mergedInto)
  return topic?.id
}

/**
 * Places the new points (in order) and updates the state in place; returns what changed. Deterministic
 * for the same state, points, configured topics and ids.
 */
export async function decideTopics(
  state: TopicState,
  points: readonly NewPoint[],
  configured: readonly ConfiguredTopic[],
  deps: TopicModelDeps,
  options: TopicModelOptions = DEFAULT_TOPIC_OPTIONS,
): Promise<TopicDecision> {
  const d = new Decision(state, deps, options)
  d.configure(configured)
  for (const point of points) d.place(point)
  if (d.clusteringDue()) await d.clusterPool()
  d.evictPool()
  d.label()
  d.merge()
  return d.result()
}

class Decision {
  private readonly assigned = new Map<string, string>()
  private readonly reassigned = new Map<string, Reassignment>()
  private readonly events: TopicEvent[] = []
  private readonly changedTopics = new Set<string>()
  private readonly changedPool = new Map<string, PoolPoint>()
  private readonly removedPool = new Map<string, PoolPoint>()
  private readonly created: Topic[] = []
  private matchers: { matcher: TopicMatcher; topicId: string }[] = []
  /** The topics not merged away, in creation order: the ones a message can join. */
  private active: Topic[]

  constructor(
    private readonly state: TopicState,
    private readonly deps: TopicModelDeps,
    private readonly options: TopicModelOptions,
  ) {
    this.active = [...state.topics.values()]
      .filter((t) => t.mergedInto === null)
      .sort((a, b) => a.seq - b.seq)
  }

  configure(configured: readonly ConfiguredTopic[]): void {
    const ids = new Set(configured.map((c) => c.id))
    for (const topic of this.state.topics.values()) {
      // A label taken out of settings.topics leaves a topic like any other.
      if (topic.configured && !ids.has(topic.id)) {
        topic.configured = false
        this.changedTopics.add(topic.id)
      }
    }
    for (const c of configured) {
      const existing = this.state.topics.get(c.id)
      if (!existing) {
        const topic = this.newTopic(c.id, c.seed, true)
        topic.label = c.label
        topic.keywords = [...c.keywords]
        this.events.push({
          type: 'analysis.topic-discovered',
          payload: { topicId: c.id, label: c.label, keywords: [...c.keywords], configured: true },
        })
      } else if (!existing.configured || !sameList(existing.keywords, c.keywords)) {
        existing.configured = true
        if (existing.mergedInto !== null) {
          existing.mergedInto = null
          this.active.push(existing)
        }
        existing.keywords = [...c.keywords]
        this.changedTopics.add(c.id)
        this.events.push({
          type: 'analysis.topic-relabeled',
          payload: { topicId: c.id, label: existing.label, keywords: [...c.keywords] },
        })
      }
    }
    const byLabel = new Map(configured.map((c) => [c.label.trim().replace(/\s+/g, ' ').toLowerCase(), c.id]))
    const spec = Object.fromEntries(configured.map((c) => [c.label, [...c.keywords]]))
    this.matchers = topicMatchers(spec).flatMap((matcher) => {
      const topicId = byLabel.get(matcher.label)
      return topicId === undefined ? [] : [{ matcher, topicId }]
    })
  }

  place(point: NewPoint): void {
    // A message without a content word ("hi", "thanks!") says nothing a topic could be about.
    if (point.terms.length === 0) return
    const key = pointKey(point)
    const byKeyword = this.keywordTopic(point.text)
    if (byKeyword) {
      this.join(byKeyword, point.embedding, point.terms)
      this.assigned.set(key, byKeyword.id)
      return
    }
    const { topic, similarity } = this.nearestTopic(point.embedding)
    if (topic && similarity >= this.options.joinSimilarity) {
      this.join(topic, point.embedding, point.terms)
      this.assigned.set(key, topic.id)
      return
    }
    const attachedTo = topic && similarity >= this.options.attachSimilarity ? topic.id : OTHER_TOPIC
    const pooled: PoolPoint = {
      conversationId: point.conversationId,
      messageId: point.messageId,
      embedding: point.embedding,
      terms: point.terms,
      attachedTo,
      seq: this.state.seq++,
    }
    this.state.pool.push(pooled)
    this.state.addedSinceClustering++
    this.changedPool.set(key, pooled)
    this.assigned.set(key, attachedTo)
  }

  clusteringDue(): boolean {
    const { pool, addedSinceClustering, poolSizeAtClustering } = this.state
    return (
      pool.length >= this.options.minTopicSize &&
      addedSinceClustering >= Math.max(1, Math.ceil(poolSizeAtClustering * this.options.poolGrowth))
    )
  }

  async clusterPool(): Promise<void> {
    const pool = this.state.pool
    const numbers = await this.deps.cluster(
      pool.map((p) => p.embedding),
      this.options.clusterSimilarity,
    )
    const clusters = new Map<number, PoolPoint[]>()
    numbers.forEach((n, i) => {
      const members = clusters.get(n) ?? []
      members.push(pool[i]!)
      clusters.set(n, members)
    })
    const placed = new Set<PoolPoint>()
    // In order of each cluster's oldest member: the same state and pool give the same topics.
    for (const cluster of [...clusters.keys()].sort((a, b) => a - b).map((n) => clusters.get(n)!)) {
      if (cluster.length < this.options.minTopicSize) continue
      const centroid = centroidOf(cluster)
      // A message closer to a topic it already counts in than to its cluster's centre stays there: a
      // cluster cut loosely (average linkage) must not take what an existing topic explains better.
      const members = cluster.filter((m) => {
        const { similarity } = this.nearestTopic(m.embedding)
        return dot(m.embedding, centroid) >= similarity
      })
      if (members.length < this.options.minTopicSize) continue
      const sum = new Float32Array(centroid.length)
      for (const m of members) addInto(sum, m.embedding)
      const { topic, similarity } = this.nearestTopic(normalized(sum))
      let target = topic && similarity >= this.options.joinSimilarity ? topic : undefined
      if (!target && this.discoveredCount() < this.options.maxTopics) {
        target = this.newTopic(this.deps.newId(), new Float32Array(sum.length), false)
        this.created.push(target)
      }
      if (!target) continue
      for (const m of members) {
        this.join(target, m.embedding, m.terms)
        this.moveOutOfPool(m, target.id)
        placed.add(m)
      }
    }
    const rest: PoolPoint[] = []
    for (const p of pool) {
      if (placed.has(p)) continue
      const { topic, similarity } = this.nearestTopic(p.embedding)
      if (topic && similarity >= this.options.joinSimilarity) {
        this.join(topic, p.embedding, p.terms)
        this.moveOutOfPool(p, topic.id)
        continue
      }
      if (topic && similarity >= this.options.attachSimilarity && p.attachedTo !== topic.id) {
        p.attachedTo = topic.id
        this.changedPool.set(pointKey(p), p)
        this.reassign(p, topic.id)
      }
      rest.push(p)
    }
    this.state.pool = rest
    this.state.poolSizeAtClustering = rest.length
    this.state.addedSinceClustering = 0
  }

  evictPool(): void {
    const excess = this.state.pool.length - this.options.poolCapacity
    if (excess <= 0) return
    // The pool is in arrival order: the oldest leave, keeping the topic (or "other") they count in.
    for (const p of this.state.pool.splice(0, excess)) this.removeFromPool(p)
  }

  /** Labels the new topics and relabels those that doubled since their label; announces both. */
  label(): void {
    const active = this.active
    const corpus = termCorpus(active.map((t) => t.terms))
    for (const topic of this.created) {
      Object.assign(topic, labelTopic(topic.terms, corpus))
      topic.labelledAtSize = topic.size
      this.events.push({
        type: 'analysis.topic-discovered',
        payload: { topicId: topic.id, label: topic.label, keywords: [...topic.keywords], configured: false },
      })
    }
    for (const topic of active) {
      if (topic.configured || this.created.includes(topic) || topic.size < 2 * topic.labelledAtSize) continue
      const { label, keywords } = labelTopic(topic.terms, corpus)
      topic.labelledAtSize = topic.size
      this.changedTopics.add(topic.id)
      if (label === topic.label && sameList(keywords, topic.keywords)) continue
      topic.label = label
      topic.keywords = keywords
      this.events.push({ type: 'analysis.topic-relabeled', payload: { topicId: topic.id, label, keywords } })
    }
  }

  /** Merges topics whose centroids have come within mergeSimilarity, until none have. */
  merge(): void {
    for (;;) {
      const active = this.active
      let pair: [Topic, Topic] | undefined
      for (const a of active) {
        if (!this.changedTopics.has(a.id)) continue
        for (const b of active) {
          if (a === b || (a.configured && b.configured)) continue
          if (dot(a.centroid, b.centroid) >= this.options.mergeSimilarity) {
            pair = [a, b]
            break
          }
        }
        if (pair) break
      }
      if (!pair) return
      const [a, b] = pair
      const [into, from] = survivorFirst(a, b)
      addInto(into.sum, from.sum)
      into.centroid = normalized(into.sum)
      into.size += from.size
      addTerms(into.terms, from.terms.entries())
      from.mergedInto = into.id
      this.active = active.filter((t) => t !== from)
      this.changedTopics.add(into.id).add(from.id)
      for (const p of this.state.pool) {
        if (p.attachedTo !== from.id) continue
        p.attachedTo = into.id
        this.changedPool.set(pointKey(p), p)
      }
      this.events.push({ type: 'analysis.topic-merged', payload: { topicId: from.id, into: into.id } })
    }
  }

  result(): TopicDecision {
    return {
      assigned: this.assigned,
      reassigned: [...this.reassigned.values()],
      events: this.events,
      changedTopics: this.changedTopics,
      changedPool: this.changedPool,
      removedPool: this.removedPool,
    }
  }

  private newTopic(id: string, seed: Vector, configured: boolean): Topic {
    const topic: Topic = {
      id,
      label: '',
      keywords: [],
      configured,
      mergedInto: null,
      sum: Float32Array.from(seed),
      centroid: normalized(seed),
      size: 0,
      terms: new Map(),
      labelledAtSize: 0,
      seq: this.state.seq++,
    }
    this.state.topics.set(id, topic)
    this.active.push(topic)
    this.changedTopics.add(id)
    return topic
  }

  private join(topic: Topic, embedding: Vector, terms: readonly string[]): void {
    addInto(topic.sum, embedding)
    topic.centroid = normalized(topic.sum)
    topic.size++
    addTerms(
      topic.terms,
      terms.map((t) => [t, 1]),
    )
    this.changedTopics.add(topic.id)
  }

  private moveOutOfPool(p: PoolPoint, topicId: string): void {
    this.removeFromPool(p)
    if (p.attachedTo !== topicId) this.reassign(p, topicId)
  }

  private removeFromPool(p: PoolPoint): void {
    const key = pointKey(p)
    this.changedPool.delete(key)
    this.removedPool.set(key, p)
  }

  private reassign(p: PoolPoint, topicId: string): void {
    const key = pointKey(p)
    if (this.assigned.has(key)) this.assigned.set(key, topicId)
    else this.reassigned.set(key, { conversationId: p.conversationId, messageId: p.messageId, topicId })
  }

  private keywordTopic(text: string): Topic | undefined {
    let best: { topicId: string; hits: number; first: number } | undefined
    for (const { matcher, topicId } of this.matchers) {
      const { hits, first } = keywordHits(text, matcher)
      if (hits > 0 && (!best || hits > best.hits || (hits === best.hits && first < best.first))) {
        best = { topicId, hits, first }
      }
    }
    return best ? this.state.topics.get(best.topicId) : undefined
  }

  private nearestTopic(v: Vector): { topic: Topic | undefined; similarity: number } {
    let topic: Topic | undefined
    let similarity = Number.NEGATIVE_INFINITY
    for (const t of this.active) {
      const s = dot(v, t.centroid)
      if (s > similarity) {
        similarity = s
        topic = t
      }
    }
    return { topic, similarity }
  }

  private discoveredCount(): number {
    return this.active.filter((t) => !t.configured).length
  }
}

function centroidOf(points: readonly PoolPoint[]): Vector {
  const sum = new Float32Array(points[0]!.embedding.length)
  for (const p of points) addInto(sum, p.embedding)
  return normalized(sum)
}

/** The topic that survives a merge first: a configured one, else the older. */
function survivorFirst(a: Topic, b: Topic): [Topic, Topic] {
  if (a.configured !== b.configured) return a.configured ? [a, b] : [b, a]
  return a.seq < b.seq ? [a, b] : [b, a]
}

function addTerms(into: TermCounts, terms: Iterable<readonly [string, number]>): void {
  for (const [term, n] of terms) into.set(term, (into.get(term) ?? 0) + n)
  if (into.size <= MAX_TERMS_KEPT) return
  // Bounded: the rarest terms go (ties by term, so the same counts keep the same terms).
  const kept = [...into].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, TERMS_AFTER_PRUNE)
  into.clear()
  for (const [term, n] of kept) into.set(term, n)
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}
