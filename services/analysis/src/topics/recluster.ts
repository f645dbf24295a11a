import { distinctLabel, labelKey, labelTopic, termCorpus, termsOncePerConversation } from './labels.ts'
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
  type Topic,
  type TopicDecision,
  type TopicEvent,
  type TopicModelOptions,
  type TopicState,
} from './topic-model.ts'
import { addInto, dot, normalized, type Vector } from './vectors.ts'

/**
 * Re-clustering a chatbot's recent requests (issue 31), the pure decision: the window's clusters in,
 * topics, reassignments and lineage events out. The I/O around it is reclusterer.ts.
 *
 * The window (the chatbot's most recent end-user requests, at most TOPIC_RECLUSTER_WINDOW) is clustered
 * afresh, on a worker thread, by UMAP to 5 dimensions and HDBSCAN (window-clusters.ts; a window of
 * under 64 requests by the pool's silhouette-cut average linkage), so how coarse the topics are comes
 * from the data's density (its min_samples chosen per window by the silhouette); HDBSCAN's noise joins
 * its nearest cluster there, and a point given no cluster (number −1) waits. The new clusters are then
 * matched to the existing topics by shared members, so that topics keep their identities:
 * - Pairs (cluster, topic) sharing members are taken most shared first, each cluster and each topic at
 *   most once, when they share at least half of the smaller of the two (the overlap coefficient ≥ ½).
 *   The cluster keeps the topic's id and label (relabelled only when most of its members are new to it).
 * - A cluster left without a topic is a new topic. When most of its members came from one topic that
 *   another cluster kept, that topic split: it keeps its id on its larger part (the one most shared,
 *   matched first), and `analysis.topic-split` names the new parts.
 * - A topic left without a cluster merged (`analysis.topic-merged`) into the topic that took at least
 *   half of its window's members, or else is retired (`analysis.topic-retired`): it takes no message
 *   again, and its window's members moved where their clusters went.
 * - Held topics, the chatbot's own (settings.topics) and those a user renamed, created from examples or
 *   merged into (pinned), win: their members are clustered with the others but stay where they are, and
 *   they are never relabelled, merged away or retired (a user's merge or label is never undone by a run).
 *   They are matched first: a cluster that shares at least half of the smaller of it and a held topic's
 *   window members is that topic's (a held topic may take several), as is a cluster most of whose other
 *   members lie inside a held topic's spread (a configured topic with few members in the window). Such a
 *   cluster's other members join the held topic by the group they come from (a discovered topic, or
 *   "other"), when most of the group lies inside the held topic's spread, and a discovered topic they
 *   came from merges into it, so no discovered topic duplicates a held one; a group that does not (a
 *   distinct request the clustering lumped in) stays in the cluster's rest. The other clusters are matched without their held members.
 *   A held topic with no member in the window is a reference of the clustering (its member mean).
 * - Topics with no member in the window (none asked about lately) are left as they are.
 * - No two topics share a label (compared as labels.ts's labelKey does): a discovered topic whose label
 *   a held topic has is relabelled.
 * Each re-clustered topic's embedding sum, size, terms and spread are its window members' from now on,
 * so that between runs a new message joins it only inside its present spread. Messages of no cluster
 * (or of one smaller than minTopicSize) wait in the pool ("other"); then every waiting message that lies
 * inside a topic's spread joins it. Conversations change topic by the reassignments (the caller publishes
 * them as analysis.messages-analyzed events), so a replay rebuilds the same assignment.
 * Deterministic for the same state, window, cluster numbers and ids.
 */
export interface WindowPoint {
  readonly conversationId: string
  readonly messageId: string
  readonly embedding: Vector
  readonly terms: readonly string[]
  /** The topic its latest result names (OTHER_TOPIC while it waits). */
  readonly topicId: string
}

export interface ReclusterDeps {
  readonly newId: () => string
}

export interface ReclusterSummary {
  readonly clustered: number
  readonly topics: number
  readonly kept: number
  readonly created: number
  readonly merged: number
  readonly retired: number
  readonly split: number
}

/** The topic a stored topic id counts in now: merges followed; OTHER_TOPIC for a retired or unknown one. */
export function currentTopic(state: TopicState, id: string): string {
  let topic = state.topics.get(id)
  while (topic?.mergedInto) topic = state.topics.get(topic.mergedInto)
  return topic && !topic.retired ? topic.id : OTHER_TOPIC
}

/** The chatbot's own topics and those a user renamed, created or merged into: their members stay. */
function isHeld(t: Topic | undefined): boolean {
  return t !== undefined && (t.configured || t.pinned)
}

/**
 * What is clustered: the whole window, the held topics' members too (decideRecluster matches the
 * clusters they fall in to their topics), and, as references (a message nearer one of them than its
 * cluster lowers that cut's silhouette), the member means of the held topics with no member in it.
 * The points are in an order of their own, by their embeddings' numbers (then conversation and message
 * id, for identical texts), not the window's (the order analysis placed them in, which follows queue
 * timing) nor their ids' (random: another capture of the same conversations gets others): the
 * clustering (seeded UMAP, HDBSCAN) and decideRecluster depend on their rows' order, so a window's topics
 * are thus a function of its set of requests' texts (bench/FINDINGS.md, "an order of its own"). Which
 * requests are in the window is unchanged.
 */
export function clusteringInput(state: TopicState, window: readonly WindowPoint[]) {
  const represented = new Set(window.map((p) => currentTopic(state, p.topicId)))
  const references = [...state.topics.values()]
    .filter(
      (t) => isHeld(t) && t.mergedInto === null && !t.retired && !represented.has(t.id) && membersOf(t) > 0,
    )
    .map((t) => {
      const out = new Float32Array(t.sum.length)
      addInto(out, t.sum, 1 / membersOf(t))
      return out
    })
  return { points: [...window].sort(byContent), references }
}

/**
 * By embedding, number by number (a text's embedding is a function of the text: embedding-model.ts), then
 * by conversation id and message id in code-unit order (identical texts): the same on every machine and
 * locale, and the same for the same texts captured again under other ids.
 */
export function byContent(a: WindowPoint, b: WindowPoint): number {
  const x = a.embedding
  const y = b.embedding
  for (let k = 0; k < x.length && k < y.length; k++) {
    if (x[k] !== y[k]) return x[k]! < y[k]! ? -1 : 1
  }
  if (x.length !== y.length) return x.length - y.length
  if (a.conversationId !== b.conversationId) return a.conversationId < b.conversationId ? -1 : 1
  if (a.messageId !== b.messageId) return a.messageId < b.messageId ? -1 : 1
  return 0
}

/**
 * Re-clusters the state in place from `points` (clusteringInput's) and their cluster numbers; returns
 * what changed, as decideTopics does, and a summary.
 */
export function decideRecluster(
  state: TopicState,
  clustered: readonly WindowPoint[],
  clusterNumbers: readonly number[],
  deps: ReclusterDeps,
  options: TopicModelOptions = DEFAULT_TOPIC_OPTIONS,
): TopicDecision & { summary: ReclusterSummary } {
  // Held as the state is now: a topic configured, renamed or merged into by a user since the window was
  // read is held too.
  const heldNow = clustered.map((p) => {
    const t = currentTopic(state, p.topicId)
    return isHeld(state.topics.get(t)) ? t : undefined
  })
  const heldMembers = countBy(heldNow.flatMap((t) => (t === undefined ? [] : [t])))
  const heldTopics = [...state.topics.values()]
    .filter((t) => isHeld(t) && t.mergedInto === null && !t.retired)
    .sort((a, b) => a.seq - b.seq)
  const priorNow = pooledSpread([...state.topics.values()].filter((t) => t.mergedInto === null && !t.retired))
  const byNumber = new Map<number, number[]>()
  clusterNumbers.forEach((n, i) => {
    // Noise (a negative number): no cluster; it waits.
    if (n < 0) return
    const list = byNumber.get(n) ?? []
    list.push(i)
    byNumber.set(n, list)
  })
  // Clusters matched to a held topic first. Its free members join it by the group they come from (a
  // discovered topic, or "other"): a group most of whose members lie inside the held topic's spread
  // joins it; another stays in the cluster's rest, matched as any cluster is.
  const joinHeld = new Map<number, string>()
  const rest: number[][] = []
  const insideHeld = (t: Topic, i: number) =>
    dot(clustered[i]!.embedding, t.sum) / membersOf(t) >= insideThreshold(t, priorNow, options)
  for (const n of [...byNumber.keys()].sort((a, b) => a - b)) {
    const all = byNumber.get(n)!
    const free = all.filter((i) => heldNow[i] === undefined)
    const [byMembers, shared] = plurality(countBy(all.flatMap((i) => heldNow[i] ?? [])))
    let into: string | undefined
    if (byMembers !== undefined && 2 * shared >= Math.min(all.length, heldMembers.get(byMembers)!))
      into = byMembers
    else if (free.length > 0) {
      const [byInside, inside] = plurality(
        countBy(
          free.flatMap((i) => insideOf(heldTopics, priorNow, clustered[i]!.embedding, options)?.id ?? []),
        ),
      )
      if (byInside !== undefined && 2 * inside > free.length) into = byInside
    }
    if (into === undefined) {
      rest.push(free)
      continue
    }
    const held = state.topics.get(into)!
    const groups = new Map<string, number[]>()
    for (const i of free) {
      const from = currentTopic(state, clustered[i]!.topicId)
      groups.set(from, [...(groups.get(from) ?? []), i])
    }
    const left: number[] = []
    for (const members of groups.values()) {
      const inside = members.filter((i) => insideHeld(held, i)).length
      if (2 * inside > members.length) for (const i of members) joinHeld.set(i, into)
      else left.push(...members)
    }
    rest.push(left)
  }
  const freeIndex = clustered.flatMap((_, i) => (heldNow[i] === undefined ? [i] : []))
  const points = freeIndex.map((i) => clustered[i]!)
  const local = new Map(freeIndex.map((i, j) => [i, j]))
  const before = points.map((p) => currentTopic(state, p.topicId))
  const clusters = rest
    .map((members) => members.map((i) => local.get(i)!))
    .filter((members) => members.length >= options.minTopicSize)
  const windowMembers = new Map<string, number>()
  for (const t of before) if (t !== OTHER_TOPIC) windowMembers.set(t, (windowMembers.get(t) ?? 0) + 1)
  const shared = clusters.map((members) => countBy(members.map((i) => before[i]!)))

  // Most shared first; ties: the older topic, then the cluster of the earlier first member.
  const pairs = shared
    .flatMap((counts, c) =>
      [...counts].filter(([t]) => t !== OTHER_TOPIC).map(([t, n]) => ({ c, t, n, seq: seqOf(state, t) })),
    )
    .sort((a, b) => b.n - a.n || a.seq - b.seq || a.c - b.c)
  const idOf: (string | undefined)[] = clusters.map(() => undefined)
  const kept = new Set<string>()
  for (const { c, t, n } of pairs) {
    if (idOf[c] !== undefined || kept.has(t)) continue
    if (2 * n < Math.min(clusters[c]!.length, windowMembers.get(t)!)) continue
    idOf[c] = t
    kept.add(t)
  }

  const events: TopicEvent[] = []
  const changedTopics = new Set<string>()
  const created: Topic[] = []
  const splits = new Map<string, string[]>()
  for (const [c, members] of clusters.entries()) {
    if (idOf[c] !== undefined) continue
    const topic = newTopic(state, deps.newId())
    created.push(topic)
    idOf[c] = topic.id
    changedTopics.add(topic.id)
    const [parent, n] = plurality(shared[c]!)
    if (parent !== undefined && 2 * n > members.length && kept.has(parent)) {
      splits.set(parent, [...(splits.get(parent) ?? []), topic.id])
    }
  }

  // Each re-clustered topic is its window members from now on.
  const relabel: Topic[] = []
  const rebuilt: Topic[] = []
  for (const [c, members] of clusters.entries()) {
    const topic = state.topics.get(idOf[c]!)!
    const previous = shared[c]!.get(topic.id) ?? 0
    rebuild(
      topic,
      members.map((i) => points[i]!),
    )
    changedTopics.add(topic.id)
    if (!created.includes(topic) && 2 * previous < members.length) relabel.push(topic)
    else if (!created.includes(topic)) rebuilt.push(topic)
  }

  const after: string[] = points.map(() => OTHER_TOPIC)
  for (const [c, members] of clusters.entries()) for (const i of members) after[i] = idOf[c]!
  // The members of a cluster that is a held topic's join it (its sum, size and terms; its spread and
  // label stay its own).
  for (const [i, into] of joinHeld) {
    const j = local.get(i)!
    after[j] = into
    if (before[j] === into) continue
    const topic = state.topics.get(into)!
    addInto(topic.sum, points[j]!.embedding)
    topic.centroid = normalized(topic.sum)
    topic.size++
    addTerms(
      topic.terms,
      points[j]!.terms.map((t) => [t, 1]),
    )
    changedTopics.add(into)
  }
  let merged = 0
  let retired = 0
  const endings: TopicEvent[] = []
  for (const t of [...windowMembers.keys()].sort((a, b) => seqOf(state, a) - seqOf(state, b))) {
    if (kept.has(t)) continue
    const topic = state.topics.get(t)!
    const went = countBy(before.flatMap((b, i) => (b === t && after[i] !== OTHER_TOPIC ? [after[i]!] : [])))
    const [into, n] = plurality(went)
    changedTopics.add(t)
    if (into !== undefined && 2 * n >= windowMembers.get(t)!) {
      topic.mergedInto = into
      merged++
      endings.push({ type: 'analysis.topic-merged', payload: { topicId: t, into } })
    } else {
      topic.retired = true
      retired++
      endings.push({ type: 'analysis.topic-retired', payload: { topicId: t } })
    }
  }

  label(state, created, relabel, rebuilt, events)
  for (const [topicId, into] of splits)
    events.push({ type: 'analysis.topic-split', payload: { topicId, into } })
  events.push(...endings)

  // The pool: what waited and was not clustered, then the clustered messages of no topic, in their order
  // (by ids, clusteringInput's).
  const reassigned = new Map<string, Reassignment>()
  const changedPool = new Map<string, PoolPoint>()
  const removedPool = new Map<string, PoolPoint>()
  const clusteredKeys = new Map(points.map((p, i) => [pointKey(p), i]))
  const pool: PoolPoint[] = state.pool.filter((p) => !clusteredKeys.has(pointKey(p)))
  for (const p of state.pool) if (clusteredKeys.has(pointKey(p))) removedPool.set(pointKey(p), p)
  for (const [i, p] of points.entries()) {
    const key = pointKey(p)
    if (after[i] !== OTHER_TOPIC) continue
    const pooled: PoolPoint = {
      conversationId: p.conversationId,
      messageId: p.messageId,
      embedding: p.embedding,
      terms: p.terms,
      attachedTo: OTHER_TOPIC,
      seq: state.seq++,
    }
    pool.push(pooled)
    removedPool.delete(key)
    changedPool.set(key, pooled)
  }
  // A merged topic's messages count in the one it merged into (the merge event says so); a retired
  // topic's are moved, to "other" at least.
  for (const [i, p] of points.entries()) {
    if (after[i] !== followMerges(state, p.topicId)) reassign(reassigned, p, after[i]!)
  }
  for (const p of pool.splice(0, Math.max(0, pool.length - options.poolCapacity))) {
    changedPool.delete(pointKey(p))
    removedPool.set(pointKey(p), p)
  }

  // Waiting messages that lie inside a topic's present spread join it.
  const active = [...state.topics.values()]
    .filter((t) => t.mergedInto === null && !t.retired)
    .sort((a, b) => a.seq - b.seq)
  const prior = pooledSpread(active)
  const waiting: PoolPoint[] = []
  for (const p of pool) {
    const topic = insideOf(active, prior, p.embedding, options)
    if (!topic) {
      waiting.push(p)
      continue
    }
    addInto(topic.sum, p.embedding)
    topic.centroid = normalized(topic.sum)
    topic.size++
    addTerms(
      topic.terms,
      p.terms.map((t) => [t, 1]),
    )
    changedTopics.add(topic.id)
    changedPool.delete(pointKey(p))
    removedPool.set(pointKey(p), p)
    reassign(reassigned, p, topic.id)
  }
  state.pool = waiting
  state.poolSizeAtClustering = waiting.length
  state.addedSinceClustering = 0

  return {
    assigned: new Map(),
    reassigned: [...reassigned.values()],
    events,
    changedTopics,
    changedPool,
    removedPool,
    summary: {
      clustered: clustered.length,
      topics: clusters.length + new Set(joinHeld.values()).size,
      kept: kept.size,
      created: created.length,
      merged,
      retired,
      split: splits.size,
    },
  }
}

function reassign(into: Map<string, Reassignment>, p: WindowPoint | PoolPoint, topicId: string): void {
  into.set(pointKey(p), { conversationId: p.conversationId, messageId: p.messageId, topicId })
}

/** The sum, size, terms (once per conversation) and spread of these members (each one's mean similarity to the others). */
function rebuild(topic: Topic, members: readonly WindowPoint[]): void {
  const sum = new Float32Array(members[0]!.embedding.length)
  for (const m of members) addInto(sum, m.embedding)
  topic.sum = sum
  topic.centroid = normalized(sum)
  topic.size = members.length
  topic.terms = new Map()
  // A term counts once per conversation among the members (labels.ts, termsOncePerConversation).
  for (const terms of termsOncePerConversation(members)) {
    addTerms(
      topic.terms,
      terms.map((t) => [t, 1]),
    )
  }
  topic.spread = { count: 0, sum: 0, squares: 0 }
  for (const m of members) record(topic.spread, (dot(m.embedding, sum) - 1) / (members.length - 1))
  topic.labelledAtSize = members.length
}

/**
 * New topics get labels; kept topics whose members are mostly new get them again. No two alike. A kept
 * topic whose members are mostly its own (`rebuilt`) keeps its label while every word of it is still a
 * member's, but its keywords are its present members' words: a keyword no member says any more (its
 * sayers went to another topic) is replaced, and a label naming such a word is made again.
 */
function label(
  state: TopicState,
  created: Topic[],
  relabel: Topic[],
  rebuilt: readonly Topic[],
  events: TopicEvent[],
): void {
  const active = [...state.topics.values()].filter((t) => t.mergedInto === null && !t.retired)
  // A held topic's label is its own: a discovered topic that has it too is relabelled.
  const heldLabels = new Set(active.filter(isHeld).map((t) => labelKey(t.label)))
  for (const t of active) {
    if (!isHeld(t) && !created.includes(t) && !relabel.includes(t) && heldLabels.has(labelKey(t.label)))
      relabel.push(t)
  }
  const corpus = termCorpus(active.map((t) => t.terms))
  const said = (t: Topic, term: string) => (t.terms.get(term) ?? 0) > 0
  for (const topic of rebuilt) {
    if (relabel.includes(topic) || topic.keywords.every((k) => said(topic, k))) continue
    if (!labelTerms(topic.label).every((k) => said(topic, k))) {
      relabel.push(topic)
      continue
    }
    topic.keywords = labelTopic(topic.terms, corpus).keywords
    events.push({
      type: 'analysis.topic-relabeled',
      payload: { topicId: topic.id, label: topic.label, keywords: [...topic.keywords] },
    })
  }
  const taken = new Set(active.filter((t) => !created.includes(t)).map((t) => t.label))
  for (const topic of created) {
    const labelled = labelTopic(topic.terms, corpus)
    topic.label = distinctLabel(labelled, taken)
    topic.keywords = labelled.keywords
    taken.add(topic.label)
    events.push({
      type: 'analysis.topic-discovered',
      payload: { topicId: topic.id, label: topic.label, keywords: [...topic.keywords], configured: false },
    })
  }
  for (const topic of relabel) {
    const labelled = labelTopic(topic.terms, corpus)
    taken.delete(topic.label)
    const newLabel = distinctLabel(labelled, taken)
    taken.add(newLabel)
    if (newLabel === topic.label && sameList(labelled.keywords, topic.keywords)) continue
    topic.label = newLabel
    topic.keywords = labelled.keywords
    events.push({
      type: 'analysis.topic-relabeled',
      payload: { topicId: topic.id, label: newLabel, keywords: [...labelled.keywords] },
    })
  }
}

/** The terms a label was made of: "reset password, login (2)" → reset password, login. */
function labelTerms(label: string): string[] {
  return label
    .replace(/ \(\d+\)$/, '')
    .split(', ')
    .filter((t) => t !== '')
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}

function insideOf(
  active: readonly Topic[],
  prior: ReturnType<typeof pooledSpread>,
  v: Vector,
  options: TopicModelOptions,
) {
  let nearest: Topic | undefined
  let best = Number.NEGATIVE_INFINITY
  for (const t of active) {
    const s = dot(v, t.centroid)
    if (s > best) {
      best = s
      nearest = t
    }
  }
  if (!nearest) return undefined
  const members = membersOf(nearest)
  if (members === 0) return undefined
  return dot(v, nearest.sum) / members >= insideThreshold(nearest, prior, options) ? nearest : undefined
}

function newTopic(state: TopicState, id: string): Topic {
  const topic: Topic = {
    id,
    label: '',
    keywords: [],
    configured: false,
    mergedInto: null,
    retired: false,
    pinned: false,
    hidden: false,
    sum: new Float32Array(0),
    centroid: new Float32Array(0),
    size: 0,
    terms: new Map(),
    labelledAtSize: 0,
    spread: { count: 0, sum: 0, squares: 0 },
    seq: state.seq++,
  }
  state.topics.set(id, topic)
  return topic
}

function followMerges(state: TopicState, id: string): string {
  let topic = state.topics.get(id)
  while (topic?.mergedInto) topic = state.topics.get(topic.mergedInto)
  return topic?.id ?? id
}

function seqOf(state: TopicState, id: string): number {
  return state.topics.get(id)?.seq ?? Number.POSITIVE_INFINITY
}

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1)
  return counts
}

/** The most frequent value other than OTHER_TOPIC (ties: the first counted), and its count. */
function plurality(counts: ReadonlyMap<string, number>): [string | undefined, number] {
  let best: [string | undefined, number] = [undefined, 0]
  for (const [v, n] of counts) if (v !== OTHER_TOPIC && n > best[1]) best = [v, n]
  return best
}
