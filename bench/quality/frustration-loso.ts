/**
 * Issue 32: would a learned combination of the frustration cues generalise to new authors better than the
 * hand-written rules of services/analysis/src/signals/detect.ts? Each end-user message of a scored conversation
 * (bench/signals-replay.ts's store) becomes a small vector of cues the service computes anyway; a logistic
 * regression (logistic-regression.ts) or boosted trees (boosted-trees.ts) read it, a conversation scores the most frustrated of its
 * end-user messages (multiple-instance), and a threshold chosen on the training sets decides. Sets are left out
 * one at a time (fit on the others, threshold on the others, score the one left out), or a half at a time.
 */
import { boostedTrees } from './boosted-trees.ts'
import { logisticRegression, sigmoid } from './logistic-regression.ts'
import type { ScoredConversation } from './signals-replay.ts'

/** The names of the features, in the vector's order; NaN marks a feature the message does not have. */
export const FEATURES = [
  // The learned frustration head: on the whole message, and its strongest reading of a unit.
  'headWhole',
  'headMax',
  // The anchors' margin: on the whole, the best unit's, and the head on the unit the anchors place nearest.
  'marginWhole',
  'marginMax',
  'headAtBestMargin',
  // The GoEmotions heads: anger, annoyance or disappointment (whole, strongest unit), and sadness.
  'displeasureWhole',
  'displeasureMax',
  'sadness',
  // The thanks the message may mimic (sarcasm) or mean: the resolution margin and the gratitude head.
  'resolution',
  'gratitude',
  // A unit asking for a person (the escalation head's strongest unit).
  'escalationMax',
  'question',
  // Its place in the conversation: a reply to the assistant, the conversation's last word.
  'reply',
  'last',
  // The turn before: the assistant's failure margin, its saying it cannot, its similarity to an earlier
  // assistant message (said again), and its asking the end user to say it again (clarification).
  'prevFailure',
  'prevInability',
  'prevRepeat',
  'prevClarification',
  // The end user's other messages: the head's strongest whole reading before, the resolution margin after.
  'upsetBefore',
  'thanksAfter',
] as const

export type FeatureName = (typeof FEATURES)[number]

/**
 * With one instance per unit (the whole message, then each sentence: cues.ts frustrationUnits), as the rules read
 * them: the unit's own head, margin, displeasure and escalation head, whether it is the whole, the message's
 * context (the features above after `sadness`), and the products the rules' gates stand for (the head with the
 * margin on the same unit; each with being a reply).
 */
export const UNIT_FEATURES = [
  'unitHead',
  'unitMargin',
  'unitDispleasure',
  'unitEscalation',
  'unitIsWhole',
  'headWhole',
  'sadness',
  'resolution',
  'gratitude',
  'question',
  'reply',
  'last',
  'prevFailure',
  'prevInability',
  'prevRepeat',
  'prevClarification',
  'upsetBefore',
  'thanksAfter',
  'headByMargin',
  'headByReply',
  'marginByReply',
] as const

export type Granularity = 'message' | 'unit'

/** The feature names of one granularity's vectors. */
export const featuresOf = (granularity: Granularity): readonly string[] =>
  granularity === 'message' ? FEATURES : UNIT_FEATURES

/** The end-user messages of one conversation as feature vectors, with its label and set. */
export interface Bag {
  readonly set: string
  readonly id: string
  readonly positive: boolean
  readonly instances: readonly Float64Array[]
}

const dot = (a: readonly number[], b: readonly number[]) => {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
  return s
}
const bool = (b: boolean | undefined) => (b === true ? 1 : 0)

/**
 * One bag per conversation: each end-user message with cues gives a row of FEATURES, or (`unit`) each of its
 * units a row of UNIT_FEATURES.
 */
export function bagsOf(
  conversations: readonly ScoredConversation[],
  granularity: Granularity = 'message',
  signal = 'frustration',
): Bag[] {
  return conversations.map((c) => {
    const m = c.messages
    const firstUser = m.findIndex((x) => x.role === 'user')
    const lastUser = m.findLastIndex((x) => x.role === 'user')
    const instances: Float64Array[] = []
    for (const [k, msg] of m.entries()) {
      const cues = msg.cues
      if (msg.role !== 'user' || cues === undefined) continue
      const units = cues.frustrationUnits ?? []
      const whole = units[0]
      const best = units.reduce<(typeof units)[number] | undefined>(
        (b, u) => (b === undefined || u.margin > b.margin ? u : b),
        undefined,
      )
      const beforeIndex = m.slice(0, k).findLastIndex((x) => x.role === 'assistant')
      const before = beforeIndex < 0 ? undefined : m[beforeIndex]
      const earlierBot = m.slice(0, Math.max(beforeIndex, 0)).filter((x) => x.role === 'assistant')
      const repeat =
        before?.vector === undefined
          ? Number.NaN
          : Math.max(
              0,
              ...earlierBot.filter((x) => x.vector !== undefined).map((x) => dot(x.vector!, before.vector!)),
            )
      const earlierUser = m.slice(0, k).filter((x) => x.role === 'user' && x.cues !== undefined)
      const laterUser = m.slice(k + 1).filter((x) => x.role === 'user' && x.cues !== undefined)
      const row: Record<FeatureName, number> = {
        headWhole: whole?.head ?? cues.emotionFrustration ?? Number.NaN,
        headMax: units.length > 0 ? Math.max(...units.map((u) => u.head)) : Number.NaN,
        marginWhole: whole?.margin ?? cues.frustration ?? Number.NaN,
        marginMax: cues.frustration ?? Number.NaN,
        headAtBestMargin: best?.head ?? Number.NaN,
        displeasureWhole: cues.displeasure ?? Number.NaN,
        displeasureMax: Math.max(...units.map((u) => u.displeasure ?? Number.NaN)),
        sadness: cues.sadness ?? Number.NaN,
        resolution: cues.resolution ?? Number.NaN,
        gratitude: cues.gratitude ?? Number.NaN,
        escalationMax: Math.max(...(cues.escalationUnits ?? []).map((u) => u.head), 0),
        question: bool(cues.question),
        reply: bool(m.slice(firstUser + 1, k).some((x) => x.role === 'assistant')),
        last: bool(k === lastUser && k === m.length - 1),
        prevFailure: before?.cues?.failure ?? Number.NaN,
        prevInability: bool(before?.cues?.inability),
        prevRepeat: repeat,
        prevClarification: before?.cues?.clarification ?? Number.NaN,
        upsetBefore: Math.max(0, ...earlierUser.map((x) => x.cues!.emotionFrustration ?? 0)),
        thanksAfter:
          laterUser.length === 0 ? Number.NaN : Math.max(...laterUser.map((x) => x.cues!.resolution ?? -1)),
      }
      if (granularity === 'message') {
        instances.push(Float64Array.from(FEATURES.map((f) => row[f])))
        continue
      }
      for (const [u, unit] of units.entries()) {
        const r: Record<(typeof UNIT_FEATURES)[number], number> = {
          ...row,
          unitHead: unit.head,
          unitMargin: unit.margin,
          unitDispleasure: unit.displeasure ?? Number.NaN,
          unitEscalation: cues.escalationUnits?.[u]?.head ?? 0,
          unitIsWhole: bool(u === 0),
          headByMargin: unit.head * unit.margin,
          headByReply: unit.head * row.reply,
          marginByReply: unit.margin * row.reply,
        }
        instances.push(Float64Array.from(UNIT_FEATURES.map((f) => r[f])))
      }
    }
    return { set: c.set, id: c.id, positive: c.labels.includes(signal), instances }
  })
}

/**
 * A fitted model: the features it reads (indices into the bags' vectors), their training means and spreads, and
 * the log-odds it gives a standardised row; a linear one's weights, for the report.
 */
export interface Model {
  readonly columns: readonly number[]
  readonly mean: Float64Array
  readonly scale: Float64Array
  readonly logit: (z: Float64Array) => number
  readonly weights?: Float64Array
}

export interface FitOptions {
  /** Indices into the bags' feature vectors the model reads (all by default). */
  readonly columns?: readonly number[]
  /**
   * 'all': every end-user message of a labelled conversation is a positive; 'top': then, `rounds` times, only
   * each labelled conversation's message the model scores highest is (the others are left out of the fit).
   */
  readonly instances: 'all' | 'top'
  readonly rounds?: number
  /** A logistic regression (the default), or boosted trees (boosted-trees.ts, TREE_DEFAULTS). */
  readonly learner?: 'linear' | 'trees'
  /** The ridge on the weights (not the bias), on the summed log-loss: 1, a mild pull on ~3,000 rows. */
  readonly l2?: number
}

/** The standardised row: NaN (a missing feature) reads as the training mean. */
function standardise(model: Pick<Model, 'columns' | 'mean' | 'scale'>, x: Float64Array): Float64Array {
  const out = new Float64Array(model.columns.length)
  model.columns.forEach((col, j) => {
    const v = x[col]!
    out[j] = Number.isNaN(v) ? 0 : (v - model.mean[j]!) / model.scale[j]!
  })
  return out
}

/** The model's probability that this message shows the signal. */
export const scoreInstance = (model: Model, x: Float64Array) => sigmoid(model.logit(standardise(model, x)))

/** A conversation's score: its most frustrated end-user message's (0 when it has none). */
export const scoreBag = (model: Model, bag: Bag) =>
  Math.max(0, ...bag.instances.map((x) => scoreInstance(model, x)))

/** Fits a logistic regression (or boosted trees) on the bags' instances, as `opts` says; deterministic. */
export function fitModel(bags: readonly Bag[], opts: FitOptions): Model {
  const all = bags.flatMap((b) => b.instances)
  const columns = opts.columns ?? Array.from(all[0]?.length === undefined ? [] : all[0], (_, i) => i)
  const mean = new Float64Array(columns.length)
  const scale = new Float64Array(columns.length)
  columns.forEach((col, j) => {
    const values = all.map((x) => x[col]!).filter((v) => !Number.isNaN(v))
    const mu = values.reduce((a, v) => a + v, 0) / Math.max(values.length, 1)
    const variance = values.reduce((a, v) => a + (v - mu) ** 2, 0) / Math.max(values.length, 1)
    mean[j] = mu
    scale[j] = Math.sqrt(variance) || 1
  })
  const base = { columns, mean, scale }
  const fitOn = (picked: (bag: Bag) => readonly Float64Array[]): Model => {
    const rows = bags.flatMap((b) =>
      (b.positive ? picked(b) : b.instances).map((x) => ({ x: standardise(base, x), y: b.positive ? 1 : 0 })),
    )
    if (opts.learner === 'trees') return { ...base, logit: boostedTrees(rows) }
    const { weights, bias } = logisticRegression(rows, opts.l2 ?? 1)
    const logit = (z: Float64Array) => {
      let sum = bias
      for (let j = 0; j < z.length; j++) sum += weights[j]! * z[j]!
      return sum
    }
    return { ...base, logit, weights }
  }
  let model = fitOn((b) => b.instances)
  if (opts.instances === 'top') {
    for (let round = 0; round < (opts.rounds ?? 4); round++) {
      const m = model
      model = fitOn((b) => {
        if (b.instances.length === 0) return []
        const scores = b.instances.map((x) => scoreInstance(m, x))
        return [b.instances[scores.indexOf(Math.max(...scores))]!]
      })
    }
  }
  return model
}

export interface Counts {
  tp: number
  fp: number
  fn: number
}

export const countsAt = (
  scored: readonly { score: number; positive: boolean }[],
  threshold: number,
): Counts => {
  const c = { tp: 0, fp: 0, fn: 0 }
  for (const s of scored) {
    const found = s.score >= threshold
    if (found && s.positive) c.tp++
    else if (found) c.fp++
    else if (s.positive) c.fn++
  }
  return c
}

/**
 * The threshold with the fewest errors (fp + fn) on these conversations, midway between two scores; of equal
 * ones, the middle of the widest run of thresholds giving that count (least sensitive to where it lies).
 */
export function chooseThreshold(scored: readonly { score: number; positive: boolean }[]): number {
  const scores = [...new Set(scored.map((s) => s.score))].sort((a, b) => a - b)
  const cuts = [
    scores[0]! - 1e-6,
    ...scores.slice(1).map((s, i) => (s + scores[i]!) / 2),
    scores.at(-1)! + 1e-6,
  ]
  const errors = cuts.map((t) => {
    const c = countsAt(scored, t)
    return c.fp + c.fn
  })
  const fewest = Math.min(...errors)
  let best = { from: 0, length: 0 }
  for (let i = 0; i < cuts.length; ) {
    if (errors[i] !== fewest) {
      i++
      continue
    }
    let j = i
    while (j + 1 < cuts.length && errors[j + 1] === fewest) j++
    if (j - i + 1 > best.length) best = { from: i, length: j - i + 1 }
    i = j + 1
  }
  return cuts[best.from + Math.floor((best.length - 1) / 2)]!
}

export interface HeldOut {
  /** The sets scored. */
  readonly sets: readonly string[]
  readonly threshold: number
  readonly model: Model
  /** Per set scored. */
  readonly counts: Record<string, Counts>
  /** The conversations decided wrongly, as `set id`. */
  readonly wrong: readonly string[]
}

/** Fits on `train`, chooses the threshold on `train`'s own scores, and decides `test` with both. */
export function fitAndTest(train: readonly Bag[], test: readonly Bag[], opts: FitOptions): HeldOut {
  const model = fitModel(train, opts)
  const threshold = chooseThreshold(train.map((b) => ({ score: scoreBag(model, b), positive: b.positive })))
  const counts: Record<string, Counts> = {}
  const wrong: string[] = []
  for (const b of test) {
    counts[b.set] ??= { tp: 0, fp: 0, fn: 0 }
    const c = counts[b.set]!
    const found = scoreBag(model, b) >= threshold
    if (found && b.positive) c.tp++
    else if (found || b.positive) {
      c[found ? 'fp' : 'fn']++
      wrong.push(`${b.set} ${b.id}`)
    }
  }
  return { sets: [...new Set(test.map((b) => b.set))], threshold, model, counts, wrong }
}

/** Leave one set out: for each set, fit and choose the threshold on every other set, and decide that one. */
export function leaveOneSetOut(bags: readonly Bag[], opts: FitOptions): HeldOut[] {
  const sets = [...new Set(bags.map((b) => b.set))]
  return sets.map((set) =>
    fitAndTest(
      bags.filter((b) => b.set !== set),
      bags.filter((b) => b.set === set),
      opts,
    ),
  )
}

export const precision = (c: Counts) => (c.tp + c.fp === 0 ? 1 : c.tp / (c.tp + c.fp))
export const recall = (c: Counts) => (c.tp + c.fn === 0 ? 1 : c.tp / (c.tp + c.fn))
export const sum = (cs: readonly Counts[]): Counts =>
  cs.reduce((a, c) => ({ tp: a.tp + c.tp, fp: a.fp + c.fp, fn: a.fn + c.fn }), { tp: 0, fp: 0, fn: 0 })
