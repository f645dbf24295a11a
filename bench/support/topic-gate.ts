import type { EmbeddingModel } from '../../services/analysis/src/providers/embedding-model.ts'
import { REPLY_REQUEST_ANCHORS } from '../../services/analysis/src/topics/answers.ts'
import {
  clauseAsks,
  FOLLOW_UP_MARGIN,
  type GateAnchors,
  type OwnPlans,
  REQUEST_ANCHORS,
  requestEmbeddings,
  type SocialFormula,
  TOPIC_SOCIAL_ANCHORS,
} from '../../services/analysis/src/topics/requests.ts'
import type { Text } from './texts.ts'

/** The topic gate's anchors, embedded by `model` as the analyzer embeds them. */
export async function gateAnchors(model: EmbeddingModel): Promise<GateAnchors> {
  return {
    social: await model.embed(TOPIC_SOCIAL_ANCHORS),
    request: await model.embed(REQUEST_ANCHORS),
    otherRequest: (await model.embed(REPLY_REQUEST_ANCHORS)).slice(REQUEST_ANCHORS.length),
  }
}

/** The rules makesTopic reads in place of the analyzer's: the end user's own plans, and the social formulae. */
export interface GateRules {
  readonly plans: OwnPlans
  readonly formula?: SocialFormula
}

/** Texts to run through the gate, each asked first or after a request (`later`). */
export interface GateSet {
  readonly name: string
  readonly items: readonly Text[]
  readonly later: boolean
}

/**
 * Each set through the gate without and with a rule, on the same embeddings, as the benches of the rules
 * (own-plans.ts, other-languages.ts) report them: prints a table row a set (messages, those making a topic without
 * and with, those the rule takes a topic from and gives one to) and returns the lines listing the texts lost and
 * gained, each set's followed by its own (`listed`, given whether each text makes a topic without and with).
 */
export async function reportWithoutAndWith<S extends GateSet>(
  model: EmbeddingModel,
  anchors: GateAnchors,
  sets: readonly S[],
  rules: { readonly without: GateRules; readonly with: GateRules },
  listed: (set: S, before: readonly boolean[], after: readonly boolean[]) => string[] = () => [],
): Promise<string[]> {
  const count = (xs: boolean[]) => xs.filter(Boolean).length
  const lists: string[] = []
  console.log('| set | messages | topic without | topic with | lost | gained |')
  console.log('|---|--:|--:|--:|--:|--:|')
  for (const set of sets) {
    const texts = set.items.map((i) => i.text)
    const before = await makesTopic(model, anchors, texts, rules.without, set.later)
    const after = await makesTopic(model, anchors, texts, rules.with, set.later)
    const lost = set.items.filter((_, i) => before[i] && !after[i])
    const gained = set.items.filter((_, i) => !before[i] && after[i])
    console.log(
      `| ${set.name} | ${texts.length} | ${count(before)} | ${count(after)} | ${lost.length} | ${gained.length} |`,
    )
    for (const item of lost)
      lists.push(`- lost, ${set.name}: ${JSON.stringify(item.text.slice(0, 120))} (${item.where})`)
    for (const item of gained)
      lists.push(`- gained, ${set.name}: ${JSON.stringify(item.text.slice(0, 120))} (${item.where})`)
    lists.push(...listed(set, before, after))
  }
  return lists
}

/**
 * Whether each text makes a topic on the analyzer's gate path (requestEmbeddings, then, for a message asked after a
 * request (`later`), clauseAsks with FOLLOW_UP_MARGIN), with the rules `plans` and `formula` in place of the
 * analyzer's: what the benches of those rules (own-plans.ts, other-languages.ts) run without and with them.
 */
export async function makesTopic(
  model: EmbeddingModel,
  anchors: GateAnchors,
  texts: readonly string[],
  rules: GateRules,
  later: boolean,
): Promise<boolean[]> {
  if (texts.length === 0) return []
  const embed = (t: readonly string[]) => model.embed(t)
  const placed = await requestEmbeddings(
    texts,
    await model.embed(texts),
    anchors,
    embed,
    undefined,
    rules.plans,
    rules.formula,
  )
  if (!later) return placed.map((p) => p !== undefined)
  const open = placed.flatMap((p, i) => (p && !p.byClauses && p.margin < FOLLOW_UP_MARGIN ? [i] : []))
  const least = await clauseAsks(
    open.map((i) => texts[i]!),
    anchors,
    embed,
    FOLLOW_UP_MARGIN,
    rules.plans,
    rules.formula,
  )
  const margins = placed.map((p) => p?.margin)
  for (const [k, i] of open.entries())
    if (least[k] !== undefined) margins[i] = Math.max(margins[i]!, least[k]!)
  return margins.map((m) => m !== undefined && m < FOLLOW_UP_MARGIN)
}
