import { analysis, defaultsOf } from '@cas/config'
import { OTHER_TOPIC_ID } from '@cas/events'
import { keywordHits, type TopicMatcher, topicMatchers } from '../topic-matchers.ts'
import { distinctLabel, labelTopic, type TermCounts, termCorpus, termsOncePerConversation } from './labels.ts'
import type { SimilarityMemo } from './similarity-memo.ts'
import { addInto, dot, normalized, type Vector } from './vectors.ts'

/**
 * A chatbot's topics, discovered online from its end users' messages (the decision is pure: state and
 * new messages in, assignments and events out; services/analysis/src/topics/topic-store.ts reads and
 * writes the state around it).
 *
 * How coarse the topics are comes from the chatbot's own data, never from a similarity fitted to one
 * corpus (issue 31: a fixed join threshold chosen on CLINC150's ten far-apart domains let early topics
 * snowball on a one-domain chatbot's traffic, where requests lie close together):
 * - Each topic keeps its spread: the count, sum and sum of squares of its founding members' mean
 *   similarities to the other founders, summed when topics merge. A message joins the topic whose
 *   centroid is most similar only when it lies inside that topic's spread: when its mean similarity to
 *   the topic's members (exact from the embedding sum, and unlike the similarity to a centroid the same
 *   whatever the topic's size) is at least mean − `insideDeviations`·sd. A topic with few founders has its mean and variance shrunk
 *   toward the chatbot's topics' pooled ones, as if it had `priorMembers` more members like those. The
 *   spread is not updated as messages join: each would join near the edge and lower the bar for the next,
 *   the snowball by another road (measured: bench/FINDINGS.md).
 * - A message no topic takes waits in a pool, counted as "other" meanwhile (no longer as its nearest
 *   topic's: that was the snowball).
 * - Each time the pool has grown by a quarter, it is clustered: the average-linkage dendrogram cut where
 *   the silhouette is highest (agglomerative.ts, measured against the existing topics too). A cluster of
 *   `minTopicSize` or more joins the topic its centroid lies inside, or becomes a new topic, so a topic is
 *   found without being told how many there are, and only once several end users ask about it. Its
 *   members move to it: they are reassigned, by events. A pooled message that now lies inside a topic
 *   joins it.
 * - Two topics merge, into the older one, when the mean similarity between their members is at least the
 *   mean similarity within one of them (all exact from the embedding sums): as average linkage would join
 *   them. Ids never change otherwise. Labels come from the members' words (labels.ts), and are recomputed
 *   each time a topic has doubled since its last label.
 * - The chatbot's own topics (settings.topics: label → keywords) come first: a message naming a keyword
 *   joins it whatever its embedding, and its centroid starts from the embedding of its label and keywords,
 *   so that similar messages join it too. Their labels never change, and they never merge into another.
 * - At most `maxTopics` discovered topics; past that, the pool's clusters stay in it (the long tail is
 *   "other"). The pool keeps at most `poolCapacity` messages, the oldest leaving first.
 */
export interface TopicModelOptions {
  readonly insideDeviations: number
  readonly priorMembers: number
  readonly minTopicSize: number
  readonly maxTopics: number
  readonly poolCapacity: number
  readonly poolGrowth: number
}

/** insideDeviations and priorMembers chosen on CLINC150's validation split, confirmed on DSTC11's development set: bench/FINDINGS.md. */
export const DEFAULT_TOPIC_OPTIONS: TopicModelOptions = {
  insideDeviations: 1,
  priorMembers: 10,
  minTopicSize: 3,
  maxTopics: defaultsOf(analysis).ANALYSIS_MAX_TOPICS,
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
  /** Re-clustering found no cluster for it (recluster.ts): it takes no message again. */
  retired: boolean
  /**
   * Renamed, or merged into, by an owner or admin (topic-commands.ts): its label never changes,
   * it never merges away, and re-clustering leaves it and its members as they are (like a configured one).
   */
  pinned: boolean
  /** Hidden by an owner or admin: out of analytics lists; it takes messages as before. */
  hidden: boolean
  /** Sum of the members' embeddings (and, for a configured topic, of its description's). */
  sum: Vector
  centroid: Vector
  size: number
  terms: TermCounts
  labelledAtSize: number
  /** Its founding members' mean similarities to the other founders: how many, their sum, their sum of squares. */
  spread: Spread
  /** Creation order: the older of two merging topics survives. */
  readonly seq: number
}

export interface Spread {
  count: number
  sum: number
  squares: number
}

export interface PoolPoint {
  readonly conversationId: string
  readonly messageId: string
  readonly embedding: Vector
  readonly terms: readonly string[]
  /** The topic the message counts in while it waits: OTHER_TOPIC (a nearest topic's in states before issue 31). */
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
  /** The last theme grouping's similarities, reused by the next (theme-store.ts); in memory only. */
  themeSimilarities?: SimilarityMemo
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
  | { readonly type: 'analysis.topic-split'; readonly payload: { topicId: string; into: string[] } }
  | { readonly type: 'analysis.topic-retired'; readonly payload: { topicId: string } }

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
  /** poolClusters (agglomerative.ts), possibly run on another thread. */
  readonly cluster: (vectors: readonly Vector[], references: readonly Vector[]) => Promise<number[]>
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
  // A retired topic counts nothing: its message is placed afresh.
  return topic?.retired ? undefined : topic?.id
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
  /** The active topics' spreads pooled: what a young topic's is shrunk toward. */
  private prior: Spread

  constructor(
    private readonly state: TopicState,
    private readonly deps: TopicModelDeps,
    private readonly options: TopicModelOptions,
  ) {
    this.active = [...state.topics.values()]
      .filter((t) => t.mergedInto === null && !t.retired)
      .sort((a, b) => a.seq - b.seq)
    this.prior = pooledSpread(this.active)
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
    // Which messages are requests is the analyzer's model's decision ("hi", "thanks!" come without an
    // embedding); every request comes with terms (terms.ts), a point without any cannot be named.
    if (point.terms.length === 0) return
    const key = pointKey(point)
    const byKeyword = this.keywordTopic(point.text)
    if (byKeyword) {
      this.join(byKeyword, point.embedding, point.terms)
      this.assigned.set(key, byKeyword.id)
      return
    }
    const inside = this.topicInside(point.embedding)
    if (inside) {
      this.join(inside.topic, point.embedding, point.terms)
      this.assigned.set(key, inside.topic.id)
      return
    }
    const attachedTo = OTHER_TOPIC
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
      this.active.flatMap((t) => {
        const count = membersOf(t)
        return count > 0 ? [scaled(t.sum, 1 / count)] : []
      }),
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
      let target = this.topicInside(sum, members.length)?.topic
      if (!target && this.discoveredCount() < this.options.maxTopics) {
        target = this.newTopic(this.deps.newId(), new Float32Array(sum.length), false)
        this.created.push(target)
        // A new topic's spread: each member's mean similarity to the others.
        for (const m of members) record(target.spread, (dot(m.embedding, sum) - 1) / (members.length - 1))
      }
      if (target) {
        // A term counts once per conversation among the members (labels.ts, termsOncePerConversation).
        const terms = termsOncePerConversation(members)
        members.forEach((m, i) => {
          this.join(target, m.embedding, terms[i]!)
        })
      }
      if (!target) continue
      for (const m of members) {
        this.moveOutOfPool(m, target.id)
        placed.add(m)
      }
      this.prior = pooledSpread(this.active)
    }
    const rest: PoolPoint[] = []
    for (const p of pool) {
      if (placed.has(p)) continue
      const inside = this.topicInside(p.embedding)
      if (inside) {
        this.join(inside.topic, p.embedding, p.terms)
        this.moveOutOfPool(p, inside.topic.id)
        continue
      }
      // A message counted in its nearest topic by a state before issue 31 counts in "other" now.
      if (p.attachedTo !== OTHER_TOPIC) {
        p.attachedTo = OTHER_TOPIC
        this.changedPool.set(pointKey(p), p)
        this.reassign(p, OTHER_TOPIC)
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
    // No two topics of a chatbot share a label (issue 31): a new or changed label is made distinct
    // from the others' (distinctLabel).
    const taken = new Set(active.filter((t) => !this.created.includes(t)).map((t) => t.label))
    for (const topic of this.created) {
      const labelled = labelTopic(topic.terms, corpus)
      Object.assign(topic, labelled, { label: distinctLabel(labelled, taken) })
      taken.add(topic.label)
      topic.labelledAtSize = topic.size
      this.events.push({
        type: 'analysis.topic-discovered',
        payload: { topicId: topic.id, label: topic.label, keywords: [...topic.keywords], configured: false },
      })
    }
    for (const topic of active) {
      if (
        topic.configured ||
        topic.pinned ||
        this.created.includes(topic) ||
        topic.size < 2 * topic.labelledAtSize
      )
        continue
      const labelled = labelTopic(topic.terms, corpus)
      taken.delete(topic.label)
      const label = distinctLabel(labelled, taken)
      const keywords = labelled.keywords
      taken.add(label)
      topic.labelledAtSize = topic.size
      this.changedTopics.add(topic.id)
      if (label === topic.label && sameList(keywords, topic.keywords)) continue
      topic.label = label
      topic.keywords = keywords
      this.events.push({ type: 'analysis.topic-relabeled', payload: { topicId: topic.id, label, keywords } })
    }
  }

  /**
   * Merges two topics when the mean similarity between their members is at least the mean similarity
   * within one of them (average linkage's criterion, from the sums: Σa·Σb / (na·nb) against
   * (|Σa|² − na) / (na·(na − 1)) for unit members), until none do.
   */
  merge(): void {
    for (;;) {
      const active = this.active
      // Each topic's within-similarity once per pass, not once per pair (the same numbers).
      const withins = new Map<Topic, number>()
      const withinOf = (t: Topic) => {
        let w = withins.get(t)
        if (w === undefined) {
          w = withinSimilarity(t)
          withins.set(t, w)
        }
        return w
      }
      let pair: [Topic, Topic] | undefined
      for (const a of active) {
        if (!this.changedTopics.has(a.id)) continue
        for (const b of active) {
          if (a === b || (held(a) && held(b))) continue
          if (belongTogether(a, b, withinOf)) {
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
      into.spread.count += from.spread.count
      into.spread.sum += from.spread.sum
      into.spread.squares += from.spread.squares
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
      retired: false,
      pinned: false,
      hidden: false,
      sum: Float32Array.from(seed),
      centroid: normalized(seed),
      size: 0,
      terms: new Map(),
      labelledAtSize: 0,
      spread: { count: 0, sum: 0, squares: 0 },
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

  /**
   * The topic whose centroid is most similar to `v` (a message's embedding, or the sum of `count` of
   * them) when it lies inside that topic's spread: when its mean similarity to the topic's members
   * (exact from the sums) is at least the topic's threshold. Else undefined.
   */
  private topicInside(v: Vector, count = 1): { topic: Topic } | undefined {
    const { topic } = this.nearestTopic(v)
    if (!topic) return undefined
    const members = membersOf(topic)
    if (members === 0) return undefined
    return dot(v, topic.sum) / (count * members) >= this.joinThreshold(topic) ? { topic } : undefined
  }

  private joinThreshold(topic: Topic): number {
    return insideThreshold(topic, this.prior, this.options)
  }

  private discoveredCount(): number {
    return this.active.filter((t) => !t.configured).length
  }
}

/**
 * mean − insideDeviations·sd of a topic's founders' mean similarities to each other, shrunk toward the
 * pooled spread of the chatbot's topics (`prior`) as if it had priorMembers more founders.
 */
export function insideThreshold(topic: Topic, prior: Spread, options: TopicModelOptions): number {
  const k = options.priorMembers
  const own = topic.spread
  if (own.count === 0 && prior.count === 0) return Number.POSITIVE_INFINITY
  const priorMean = prior.count > 0 ? prior.sum / prior.count : own.sum / own.count
  const priorSquares = prior.count > 0 ? prior.squares / prior.count : own.squares / own.count
  const weight = own.count + k
  const mean = (own.sum + k * priorMean) / weight
  const variance = Math.max(0, (own.squares + k * priorSquares) / weight - mean * mean)
  return mean - options.insideDeviations * Math.sqrt(variance)
}

export function record(spread: Spread, similarity: number): void {
  spread.count++
  spread.sum += similarity
  spread.squares += similarity * similarity
}

export function pooledSpread(topics: readonly Topic[]): Spread {
  const pooled = { count: 0, sum: 0, squares: 0 }
  for (const t of topics) {
    pooled.count += t.spread.count
    pooled.sum += t.spread.sum
    pooled.squares += t.spread.squares
  }
  return pooled
}

/** A topic's members as its sum counts them: a configured topic's example is one more. */
export const membersOf = (t: Topic) => t.size + (t.configured ? 1 : 0)

/** The mean similarity between two distinct members of the topic, from its sum of unit members. */
function withinSimilarity(t: Topic): number {
  const n = membersOf(t)
  return (dot(t.sum, t.sum) - n) / (n * (n - 1))
}

/** The members' mean similarity between the two topics is at least that within one of them. */
function belongTogether(a: Topic, b: Topic, within: (t: Topic) => number): boolean {
  const na = membersOf(a)
  const nb = membersOf(b)
  if (na < 2 || nb < 2) return false
  const between = dot(a.sum, b.sum) / (na * nb)
  return between >= Math.min(within(a), within(b))
}

function scaled(v: Vector, factor: number): Vector {
  const out = new Float32Array(v.length)
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * factor
  return out
}

function centroidOf(points: readonly PoolPoint[]): Vector {
  const sum = new Float32Array(points[0]!.embedding.length)
  for (const p of points) addInto(sum, p.embedding)
  return normalized(sum)
}

/** A configured topic, or one a user renamed or merged into: it never merges away. */
function held(t: Topic): boolean {
  return t.configured || t.pinned
}

/** The topic that survives a merge first: a configured one, else a pinned one, else the older. */
function survivorFirst(a: Topic, b: Topic): [Topic, Topic] {
  if (a.configured !== b.configured) return a.configured ? [a, b] : [b, a]
  if (a.pinned !== b.pinned) return a.pinned ? [a, b] : [b, a]
  return a.seq < b.seq ? [a, b] : [b, a]
}

export function addTerms(into: TermCounts, terms: Iterable<readonly [string, number]>): void {
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
