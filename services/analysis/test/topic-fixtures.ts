import type { Topic, TopicState } from '../src/topics/topic-model.ts'
import { addInto, dot, normalized, type Vector } from '../src/topics/vectors.ts'

/**
 * The topic tests' topic: one holding these members, as a clustering founds it (their embedding sum,
 * size and spread: each member's mean similarity to the others), with the terms given (by default each
 * member's), added to the state after its other topics. `fields` sets the rest (pinned, configured, …).
 */
export function addTopic(
  state: TopicState,
  id: string,
  label: string,
  members: readonly { readonly embedding: Vector; readonly terms?: readonly string[] }[],
  fields: Partial<Topic> = {},
): Topic {
  const sum = new Float32Array(members[0]!.embedding.length)
  for (const m of members) addInto(sum, m.embedding)
  const spread = { count: 0, sum: 0, squares: 0 }
  for (const m of members) {
    const s = (dot(m.embedding, sum) - 1) / (members.length - 1)
    spread.count++
    spread.sum += s
    spread.squares += s * s
  }
  const topic: Topic = {
    id,
    label,
    keywords: [],
    configured: false,
    mergedInto: null,
    retired: false,
    pinned: false,
    hidden: false,
    sum,
    centroid: normalized(sum),
    size: members.length,
    terms: new Map(members.flatMap((m) => m.terms ?? []).map((w) => [w, 1])),
    labelledAtSize: members.length,
    spread,
    seq: state.seq++,
    ...fields,
  }
  state.topics.set(id, topic)
  return topic
}
