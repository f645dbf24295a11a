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

/** The topic gate's anchors, embedded by `model` as the analyzer embeds them. */
export async function gateAnchors(model: EmbeddingModel): Promise<GateAnchors> {
  return {
    social: await model.embed(TOPIC_SOCIAL_ANCHORS),
    request: await model.embed(REQUEST_ANCHORS),
    otherRequest: (await model.embed(REPLY_REQUEST_ANCHORS)).slice(REQUEST_ANCHORS.length),
  }
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
  rules: { readonly plans: OwnPlans; readonly formula?: SocialFormula },
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
