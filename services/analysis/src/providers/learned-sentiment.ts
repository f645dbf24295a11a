/**
 * The learned sentiment and emotions of an end user's message: linear heads on the message's MiniLM
 * embedding (the one the analyzer computes for topics anyway), trained offline by `npm run
 * train:sentiment` (services/analysis/train/train-sentiment.ts) and shipped as sentiment-model.json.
 * A few thousand multiply-adds a message: nothing beside the embedding itself.
 *
 * - Sentiment: softmax over negative / neutral / positive, from the embedding and the lexical score
 *   (sentiment.ts) as one more input. The label is the most probable class; the score is P(positive) −
 *   P(negative), kept on the label's side of ±0.05 so that labelFor(score) gives the same label.
 *   Neutral is calibrated by the lexicon: when the head says neutral but the lexical score is at most
 *   NEUTRAL_LEXICAL_NEGATIVE and P(negative) > P(positive), the message reads negative ("I'm thinking of
 *   shopping elsewhere": the head reads the topic, the lexicon the leaving; bench/FINDINGS.md).
 * - Emotions: one sigmoid per emotion (analyzer.ts EMOTIONS), each calibrated so that 0.5 is its
 *   threshold of best F1 on GoEmotions' dev split.
 * - Frustration: one sigmoid trained on GoEmotions' anger, annoyance and disappointment against its other
 *   comments, on complaint anchors against misfortunes (a stolen wallet, a death), requests and thanks,
 *   and on support messages labelled frustrated or not (sarcasm, blame, threats to leave against
 *   misfortunes, factual reports, sincere thanks).
 * - Escalation (signals-v18): one sigmoid trained on end-user texts labelled as asking for a person or
 *   not (train/data/support-escalation.jsonl) against support messages and CLINC150's train requests.
 * - Handover (signals-v20): one sigmoid trained on assistant messages labelled as handing over to a person
 *   or not (train/data/support-handover.jsonl).
 *
 * Training data (services/analysis/train/README.md): GoEmotions (Demszky et al. 2020, Google Research,
 * CC BY 4.0), VADER's ground-truth snippets (Hutto & Gilbert 2014, MIT), anchor phrases and support
 * messages written for this project. New weights give a new version (a hash of the file).
 */
import { createHash } from 'node:crypto'
import { EMOTIONS, type Emotions, labelFor, type Sentiment, type SentimentLabel } from '../analyzer.ts'
// Imported, not read from disk: the bundles (dist/) carry the weights.
import shipped from './sentiment-model.json' with { type: 'json' }

export interface SentimentModelFile {
  readonly about: string
  readonly embeddingModel: string
  readonly sentiment: {
    readonly classes: SentimentLabel[]
    readonly inputs: 'embedding+lexical'
    readonly weights: number[][]
    readonly bias: number[]
  }
  /** One sigmoid on the embedding: anger, annoyance or disappointment aimed at the service. */
  readonly frustration: { readonly weights: number[][]; readonly bias: number[] }
  /** One sigmoid on the embedding: the end user asks for a person (signals-v18); absent before. */
  readonly escalation?: { readonly weights: number[][]; readonly bias: number[] }
  /** One sigmoid on the embedding: the assistant hands over to a person (signals-v20); absent before. */
  readonly handover?: { readonly weights: number[][]; readonly bias: number[] }
  readonly emotions: {
    readonly labels: string[]
    readonly calibration: Record<string, { threshold: number; f1: number; support: number }>
    readonly weights: number[][]
    readonly bias: number[]
  }
}

export interface LearnedSentiment {
  /**
   * `learned-<first 12 hex digits of the SHA-256 of the weights (as JSON) and the decision's rules>`:
   * new weights or rules, new analyzer version.
   */
  readonly version: string
  /** The embedding (unit length, 384 dimensions) and the lexical score of one message. */
  analyze(embedding: Float32Array, lexicalScore: number): { sentiment: Sentiment; emotions: Emotions }
  /**
   * The frustration head alone on any embedding of the model (a message's, or one of its sentences': the
   * signals read it on each unit, signals/cues.ts): analyze's `emotions.frustration` for a whole message.
   */
  frustration(embedding: Float32Array): number
  /**
   * signals-v37: the strongest of the GoEmotions heads anger, annoyance and disappointment (0..1, each
   * calibrated so that 0.5 is expressed) on any embedding of the model: analyze's `emotions` read on one unit
   * of an end user's message (signals/cues.ts, FrustrationUnit.displeasure).
   */
  displeasure(embedding: Float32Array): number
  /**
   * signals-v77: the GoEmotions head gratitude (0..1, 0.5 expressed) on any embedding of the model: analyze's
   * `emotions.gratitude` read on one sentence of an end user's message (signals/cues.ts, MessageCues.gratitudeLast).
   */
  gratitude(embedding: Float32Array): number
  /**
   * The escalation head on any embedding of the model (the signals read it on each unit of an end user's
   * message, signals/cues.ts), 0..1; undefined when the file has no escalation head.
   */
  readonly escalation?: (embedding: Float32Array) => number
  /**
   * The handover head on any embedding of the model (the signals read it on each unit of an assistant's
   * message, signals/cues.ts), 0..1; undefined when the file has no handover head.
   */
  readonly handover?: (embedding: Float32Array) => number
}

/** Emotion scores are rounded: events and stored results carry them. */
const round3 = (x: number) => Math.round(x * 1000) / 1000
const sigmoid = (z: number) => 1 / (1 + Math.exp(-z))

/**
 * A neutral reading with a lexical score this negative (or more), and P(negative) > P(positive), reads
 * negative. 0.25 was the better of 0.25 and 0.4 on the support messages' dev half (bench/FINDINGS.md).
 */
export const NEUTRAL_LEXICAL_NEGATIVE = -0.25
/** Part of the version: bump when the decision on the heads' outputs changes. */
const DECISION_RULES = 'neutral-by-lexicon-1'

export function loadLearnedSentiment(
  file: SentimentModelFile = shipped as SentimentModelFile,
): LearnedSentiment {
  if (file.sentiment.classes.join() !== 'negative,neutral,positive') {
    throw new Error('sentiment-model.json: classes must be negative, neutral, positive')
  }
  if (file.emotions.labels.join() !== EMOTIONS.join()) {
    throw new Error(`sentiment-model.json: emotions must be ${EMOTIONS.join(', ')}`)
  }
  const sentimentW = file.sentiment.weights.map((w) => Float64Array.from(w))
  const emotionW = file.emotions.weights.map((w) => Float64Array.from(w))
  const frustrationW = Float64Array.from(file.frustration.weights[0]!)
  const dims = emotionW[0]!.length
  const dot = (w: Float64Array, x: Float32Array) => {
    let s = 0
    for (let j = 0; j < dims; j++) s += w[j]! * x[j]!
    return s
  }
  const frustration = (embedding: Float32Array) => {
    if (embedding.length !== dims) throw new Error(`expected a ${dims}-dimension embedding`)
    return round3(sigmoid(dot(frustrationW, embedding) + file.frustration.bias[0]!))
  }
  const sigmoidHead = (head: { readonly weights: number[][]; readonly bias: number[] } | undefined) => {
    if (!head) return undefined
    const w = Float64Array.from(head.weights[0]!)
    return (embedding: Float32Array) => {
      if (embedding.length !== dims) throw new Error(`expected a ${dims}-dimension embedding`)
      return round3(sigmoid(dot(w, embedding) + head.bias[0]!))
    }
  }
  /** The k-th emotion head (EMOTIONS' order) on an embedding of the right size. */
  const emotion = (k: number, embedding: Float32Array) =>
    round3(sigmoid(dot(emotionW[k]!, embedding) + file.emotions.bias[k]!))
  const displeasureHeads = ['anger', 'annoyance', 'disappointment'].map((label) =>
    EMOTIONS.indexOf(label as (typeof EMOTIONS)[number]),
  )
  const displeasure = (embedding: Float32Array) => {
    if (embedding.length !== dims) throw new Error(`expected a ${dims}-dimension embedding`)
    return Math.max(...displeasureHeads.map((k) => emotion(k, embedding)))
  }
  const gratitudeHead = EMOTIONS.indexOf('gratitude')
  const gratitude = (embedding: Float32Array) => {
    if (embedding.length !== dims) throw new Error(`expected a ${dims}-dimension embedding`)
    return emotion(gratitudeHead, embedding)
  }
  const escalation = sigmoidHead(file.escalation)
  const handover = sigmoidHead(file.handover)
  return {
    frustration,
    displeasure,
    gratitude,
    ...(escalation ? { escalation } : {}),
    ...(handover ? { handover } : {}),
    version: `learned-${createHash('sha256').update(JSON.stringify(file)).update(DECISION_RULES).digest('hex').slice(0, 12)}`,
    analyze(embedding, lexicalScore) {
      if (embedding.length !== dims) throw new Error(`expected a ${dims}-dimension embedding`)
      const z = sentimentW.map(
        (w, k) => dot(w, embedding) + w[dims]! * lexicalScore + file.sentiment.bias[k]!,
      )
      const max = Math.max(...z)
      const e = z.map((v) => Math.exp(v - max))
      const sum = e[0]! + e[1]! + e[2]!
      const [neg, neu, pos] = e.map((v) => v / sum) as [number, number, number]
      const byHead: SentimentLabel =
        neg >= neu && neg >= pos ? 'negative' : pos > neu ? 'positive' : 'neutral'
      const label: SentimentLabel =
        byHead === 'neutral' && lexicalScore <= NEUTRAL_LEXICAL_NEGATIVE && neg > pos ? 'negative' : byHead
      const raw = pos - neg
      const score =
        label === 'negative'
          ? Math.min(raw, -0.05)
          : label === 'positive'
            ? Math.max(raw, 0.05)
            : clampNeutral(raw)
      const scores = Object.fromEntries(EMOTIONS.map((name, k) => [name, emotion(k, embedding)])) as Record<
        (typeof EMOTIONS)[number],
        number
      >
      const rounded = Math.round(score * 1e4) / 1e4
      return {
        sentiment: { score: rounded, label: labelFor(rounded) },
        emotions: { ...scores, frustration: frustration(embedding) },
      }
    },
  }
}

function clampNeutral(x: number): number {
  return Math.max(-0.049, Math.min(0.049, x))
}
