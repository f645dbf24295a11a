import { labelKey } from '@cas/events'
import { currentTopic, type WindowPoint } from './recluster.ts'
import {
  addTerms,
  DEFAULT_TOPIC_OPTIONS,
  insideThreshold,
  membersOf,
  OTHER_TOPIC,
  type PoolPoint,
  pointKey,
  pooledSpread,
  type Reassignment,
  record,
  type Spread,
  type Topic,
  type TopicDecision,
  type TopicModelOptions,
  type TopicState,
} from './topic-model.ts'
import { addInto, dot, normalized, type Vector } from './vectors.ts'

/** One example phrase of a topic an owner or admin creates: its embedding and terms, as a request's. */
export interface ExamplePoint {
  readonly embedding: Vector
  readonly terms: readonly string[]
}

export interface TopicCreation {
  readonly topicId: string
  readonly label: string
  readonly examples: readonly ExamplePoint[]
}

export type CreationDecision =
  | {
      readonly ok: true
      /** For the store to write (topics and pool), and the messages that move into the new topic. */
      readonly decision: TopicDecision
      readonly event: {
        readonly type: 'analysis.topic-created-by-user'
        readonly payload: { topicId: string; label: string; keywords: string[]; examples: number }
      }
    }
  | { readonly ok: false; readonly reason: 'exists' | 'label_taken' | 'too_few_examples' }

const KEYWORDS = 5

/**
 * Where a request stops being more like the examples than like the competing topics' requests: the
 * similarity to the examples as many of the examples' standard deviations below their mean as it is of
 * the competitors' standard deviations above theirs (the two distributions' crossing point in sd units).
 * The examples' own mean counts whole (an owner's examples say what the topic is; a chatbot's broad topics
 * say nothing about how tight it is); their variance, from a few values, is shrunk toward the chatbot's
 * topics' pooled within-topic variance as if it had priorMembers more founders (the topic model's shrinkage,
 * of the centred variance: shrinking raw second moments, as insideThreshold does, adds the gap between a
 * tight topic's mean and a broad chatbot's to its variance). The competitors are the window's requests held
 * by a topic; with fewer than two, all the window's requests; with fewer than two of those, undefined (no
 * competitors: insideThreshold alone decides). Issue 31 item 6: on a chatbot of many shops (broad topics,
 * pooled spread 0.31 ± 0.08) insideThreshold alone let 3 tight discount examples (0.68 among themselves)
 * take requests at 0.22 ("minimum £10 and i have £9.80", "do you have this sofa in grey"); this bar is 0.47.
 */
function apartFromCompetitors(
  state: TopicState,
  own: Spread,
  active: readonly Topic[],
  window: readonly WindowPoint[],
  nearExamples: (v: Vector) => number,
  options: TopicModelOptions,
): number | undefined {
  let held = window.filter((p) => currentTopic(state, p.topicId) !== OTHER_TOPIC)
  if (held.length < 2) held = [...window]
  if (held.length < 2) return undefined
  const outside = { count: 0, sum: 0, squares: 0 }
  for (const p of held) record(outside, nearExamples(p.embedding))
  const outsideMean = outside.sum / outside.count
  const outsideSd = Math.sqrt(Math.max(0, outside.squares / outside.count - outsideMean ** 2))
  const centred = (s: Spread) => Math.max(0, s.squares - (s.sum * s.sum) / s.count)
  let priorCount = 0
  let priorCentred = 0
  for (const t of active) {
    if (t.spread.count === 0) continue
    priorCount += t.spread.count
    priorCentred += centred(t.spread)
  }
  const k = priorCount > 0 ? options.priorMembers : 0
  const ownMean = own.sum / own.count
  const ownVariance = (centred(own) + (k > 0 ? (k * priorCentred) / priorCount : 0)) / (own.count + k)
  const ownSd = Math.sqrt(ownVariance)
  if (ownSd + outsideSd === 0) return (ownMean + outsideMean) / 2
  return (ownMean * outsideSd + outsideMean * ownSd) / (ownSd + outsideSd)
}

/**
 * Creates a topic from an owner's or admin's examples (pure: the state, the examples' embeddings and the
 * chatbot's window in; the state changed in place, and what changed, out). The topic is made as the
 * topic model makes one from a cluster: its examples are its founding members (their embedding sum,
 * their count, their terms) and its spread is theirs (each example's mean similarity to the others). Its
 * label is the one given, pinned: never relabelled, never merged away, left as it is by re-clustering.
 *
 * A request of the window moves into it when it lies clearly inside it: its mean similarity to the
 * examples is at least the new topic's threshold by the topic model's rule (insideThreshold: mean − 1 sd of
 * the examples' similarities, shrunk toward the chatbot's topics' spread) and past the point where it is
 * more like the examples than like the competing topics' requests, each judged by its own spread
 * (apartFromCompetitors); and, for a request a topic holds, its mean similarity to the examples is above
 * its mean similarity to that topic's members. Requests waiting in "other" face the first two tests.
 * The chatbot's own topics (settings.topics) keep their members. A topic a user renamed, created or merged
 * into (pinned) gives requests up like any other: the pin holds a user's choice against re-clustering, and a
 * creation is a user's later, explicit choice (so "Quotes" takes the quote requests of a "quote" topic a user
 * merged into "bill"). A hidden topic gives them up too: hiding only keeps it out of the lists. Moved requests
 * join the new topic (and leave their old one's sums), so later messages like them join it too (by the topic
 * model's rule).
 */
export function decideTopicCreation(
  state: TopicState,
  creation: TopicCreation,
  window: readonly WindowPoint[],
  options: TopicModelOptions = DEFAULT_TOPIC_OPTIONS,
): CreationDecision {
  if (state.topics.has(creation.topicId)) return { ok: false, reason: 'exists' }
  const active = [...state.topics.values()].filter((t) => t.mergedInto === null && !t.retired)
  // As the gateway compared it (labelKey: case aside, NFKC), for a creation asked for before another landed.
  const label = labelKey(creation.label)
  if (active.some((t) => labelKey(t.label) === label)) return { ok: false, reason: 'label_taken' }
  const examples = creation.examples
  if (examples.length < 2) return { ok: false, reason: 'too_few_examples' }
  const sum = new Float32Array(examples[0]!.embedding.length)
  for (const e of examples) addInto(sum, e.embedding)
  const spread = { count: 0, sum: 0, squares: 0 }
  for (const e of examples)
    record(spread, (dot(e.embedding, sum) - dot(e.embedding, e.embedding)) / (examples.length - 1))
  const terms = new Map<string, number>()
  addTerms(
    terms,
    examples.flatMap((e) => e.terms.map((t) => [t, 1] as const)),
  )
  const topic: Topic = {
    id: creation.topicId,
    label: creation.label,
    keywords: [],
    configured: false,
    mergedInto: null,
    retired: false,
    pinned: true,
    hidden: false,
    sum,
    centroid: normalized(sum),
    size: examples.length,
    terms,
    labelledAtSize: examples.length,
    spread,
    seq: state.seq++,
  }
  const founders = new Float32Array(sum)
  const nearExamples = (v: Vector) => dot(v, founders) / examples.length
  // Both: inside the topic's spread, as the topic model judges it, and clearly apart from the competitors.
  const threshold = Math.max(
    insideThreshold(topic, pooledSpread(active), options),
    apartFromCompetitors(state, spread, active, window, nearExamples, options) ?? Number.NEGATIVE_INFINITY,
  )
  const reassigned: Reassignment[] = []
  const changedTopics = new Set<string>([topic.id])
  const removedPool = new Map<string, PoolPoint>()
  const pooled = new Map(state.pool.map((p) => [pointKey(p), p]))
  for (const point of window) {
    const nearNew = nearExamples(point.embedding)
    if (nearNew < threshold) continue
    const from = state.topics.get(currentTopic(state, point.topicId))
    if (from?.configured) continue
    if (from) {
      const members = membersOf(from)
      if (members > 0 && dot(point.embedding, from.sum) / members >= nearNew) continue
      // It leaves its old topic's sums, so that messages like it no longer lean that way.
      addInto(from.sum, point.embedding, -1)
      from.size = Math.max(0, from.size - 1)
      from.centroid = normalized(from.sum)
      addTerms(
        from.terms,
        point.terms.map((t) => [t, -1] as const),
      )
      for (const [t, n] of from.terms) if (n <= 0) from.terms.delete(t)
      changedTopics.add(from.id)
    }
    const key = pointKey(point)
    const waiting = pooled.get(key)
    if (waiting) {
      state.pool = state.pool.filter((p) => p !== waiting)
      removedPool.set(key, waiting)
    }
    addInto(topic.sum, point.embedding)
    topic.size++
    addTerms(
      topic.terms,
      point.terms.map((t) => [t, 1] as const),
    )
    reassigned.push({ conversationId: point.conversationId, messageId: point.messageId, topicId: topic.id })
  }
  topic.centroid = normalized(topic.sum)
  topic.keywords = [...topic.terms]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, KEYWORDS)
    .map(([t]) => t)
  state.topics.set(topic.id, topic)
  return {
    ok: true,
    decision: {
      assigned: new Map(),
      reassigned,
      events: [],
      changedTopics,
      changedPool: new Map(),
      removedPool,
    },
    event: {
      type: 'analysis.topic-created-by-user',
      payload: {
        topicId: topic.id,
        label: topic.label,
        keywords: topic.keywords,
        examples: examples.length,
      },
    },
  }
}
