/**
 * Trains the learned sentiment and emotion heads the local-embedding analyzer applies to each end user's
 * message (providers/learned-sentiment.ts), and writes them to providers/sentiment-model.json:
 *
 *   npm run train:sentiment
 *
 * Reproducible: the same data, model and seed give the same weights (embeddings are cached under
 * .cache/sentiment/; the first run embeds about 80,000 texts, a few minutes on two cores).
 *
 * - Sentiment: a softmax over negative / neutral / positive on the message's MiniLM embedding (384
 *   dimensions) and the lexical score (sentiment.ts, VADER with the support extension) as one more input.
 *   Trained on GoEmotions' sentiment groups (train split; comments in one group only, "ambiguous" left
 *   out), VADER's NYT editorial, movie review and Amazon review snippets (a mean rating within ±0.5 is
 *   neutral), and the anchor phrases of anchors.ts (complaints as facts, plain requests, thanks); each
 *   corpus balanced by class. VADER's tweets, the UCI sentences, the support messages and DSTC11 are left
 *   out: the benchmark measures on them (bench/sentiment.ts), so every figure it gives is across corpora.
 * - Emotions: one sigmoid per GoEmotions emotion on the embedding, trained on GoEmotions' train split;
 *   each output's bias then shifted so that 0.5 is the threshold of best F1 on GoEmotions' dev split.
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { EMOTIONS, type Emotion } from '../src/analyzer.ts'
import type { SentimentModelFile } from '../src/providers/learned-sentiment.ts'
import { createSentimentScorer } from '../src/providers/sentiment.ts'
import { COMPLAINT_ANCHORS, MISFORTUNE_ANCHORS, NEUTRAL_ANCHORS, POSITIVE_ANCHORS } from './anchors.ts'
import { GOEMOTIONS_LABELS, goEmotions, type LabelledText, POLARITIES, vaderCorpus } from './corpora.ts'
import { embedCorpus, embeddingModel } from './embeddings.ts'
import { type LinearHead, logits, type Sample, sigmoid, train } from './linear.ts'

export const MODEL_FILE = path.resolve(import.meta.dirname, '../src/providers/sentiment-model.json')
/** The anchors' training weight: as much as one generic corpus (chosen on the support dev half). */
const ANCHOR_WEIGHT = 1
const SEED = 1
const lexical = createSentimentScorer()

interface WeightedSet {
  readonly name: string
  readonly items: readonly LabelledText[]
  /** The set's total weight, spread evenly over its classes. */
  readonly weight: number
}

async function sentimentSamples(sets: readonly WeightedSet[]): Promise<Sample[]> {
  const samples: Sample[] = []
  for (const set of sets) {
    const embeddings = await embedCorpus(
      set.name,
      set.items.map((e) => e.text),
    )
    const counts = new Map<string, number>()
    for (const e of set.items) if (e.label) counts.set(e.label, (counts.get(e.label) ?? 0) + 1)
    set.items.forEach((e, i) => {
      if (!e.label) return
      const x = new Float32Array(385)
      x.set(embeddings[i]!)
      x[384] = lexical.score(e.text)
      samples.push({
        x,
        y: POLARITIES.map((p) => (p === e.label ? 1 : 0)),
        weight: (set.weight * 10_000) / (counts.size * counts.get(e.label)!),
      })
    })
  }
  return samples
}

function round(head: LinearHead, rows: readonly number[]) {
  const r = (x: number) => Math.round(x * 1e5) / 1e5
  return {
    weights: rows.map((k) => Array.from(head.weights[k]!, r)),
    bias: rows.map((k) => r(head.bias[k]!)),
  }
}

async function main() {
  const model = await embeddingModel()
  const anchors: LabelledText[] = [
    ...COMPLAINT_ANCHORS.map((text) => ({ text, label: 'negative' as const })),
    ...NEUTRAL_ANCHORS.map((text) => ({ text, label: 'neutral' as const })),
    ...POSITIVE_ANCHORS.map((text) => ({ text, label: 'positive' as const })),
  ]
  const generic: WeightedSet[] = [
    { name: 'goemotions-train', items: goEmotions('train'), weight: 1 },
    { name: 'vader-nytEditorialSnippets', items: vaderCorpus('nytEditorialSnippets'), weight: 1 },
    { name: 'vader-movieReviewSnippets', items: vaderCorpus('movieReviewSnippets'), weight: 1 },
    { name: 'vader-amazonReviewSnippets', items: vaderCorpus('amazonReviewSnippets'), weight: 1 },
  ]
  const samples = await sentimentSamples([
    ...generic,
    { name: 'anchors', items: anchors, weight: ANCHOR_WEIGHT },
  ])
  console.log(`sentiment: ${samples.length} examples`)
  const sentiment = train(samples, 3, {
    kind: 'softmax',
    epochs: 8,
    learningRate: 0.003,
    l2: 1e-4,
    batch: 256,
    seed: SEED,
  })

  // Emotions: the GoEmotions labels the analyzer exposes, one sigmoid each.
  const indices = EMOTIONS.map((e) => GOEMOTIONS_LABELS.indexOf(e))
  if (indices.includes(-1)) throw new Error('an emotion is not a GoEmotions label')
  const trainSet = goEmotions('train')
  const trainEmbeddings = await embedCorpus(
    'goemotions-train',
    trainSet.map((e) => e.text),
  )
  const emotionSamples: Sample[] = trainSet.map((e, i) => ({
    x: trainEmbeddings[i]!,
    y: indices.map((k) => (e.emotions!.includes(k) ? 1 : 0)),
    weight: 1,
  }))
  console.log(`emotions: ${emotionSamples.length} examples, ${EMOTIONS.length} emotions`)
  const emotions = train(emotionSamples, EMOTIONS.length, {
    kind: 'sigmoid',
    epochs: 30,
    learningRate: 0.01,
    l2: 1e-6,
    batch: 256,
    seed: SEED,
  })
  // Frustration: anger, annoyance or disappointment at the service. GoEmotions' comments with one of the
  // three against the rest (its sadness, grief and fear included), and the anchors: complaints against
  // misfortunes, plain requests and thanks; each side of each source weighs the same.
  const frustrated = new Set(
    ['anger', 'annoyance', 'disappointment'].map((e) => GOEMOTIONS_LABELS.indexOf(e)),
  )
  const isFrustrated = trainSet.map((e) => e.emotions!.some((k) => frustrated.has(k)))
  const goFrustrated = isFrustrated.filter(Boolean).length
  const frustrationSamples: Sample[] = trainSet.map((_, i) => ({
    x: trainEmbeddings[i]!,
    y: [isFrustrated[i] ? 1 : 0],
    weight: 0.5 / (isFrustrated[i] ? goFrustrated : trainSet.length - goFrustrated),
  }))
  const calm = [...MISFORTUNE_ANCHORS, ...NEUTRAL_ANCHORS, ...POSITIVE_ANCHORS]
  const anchorVectors = await embedCorpus('frustration-anchors', [...COMPLAINT_ANCHORS, ...calm])
  anchorVectors.forEach((x, i) => {
    const complaint = i < COMPLAINT_ANCHORS.length
    frustrationSamples.push({
      x,
      y: [complaint ? 1 : 0],
      weight: (ANCHOR_WEIGHT * 0.5) / (complaint ? COMPLAINT_ANCHORS.length : calm.length),
    })
  })
  for (const s of frustrationSamples) (s as { weight: number }).weight *= 10_000
  const frustration = train(frustrationSamples, 1, {
    kind: 'sigmoid',
    epochs: 30,
    learningRate: 0.01,
    l2: 1e-6,
    batch: 256,
    seed: SEED,
  })

  // Calibration on dev: 0.5 becomes each emotion's threshold of best F1.
  const dev = goEmotions('dev')
  const devEmbeddings = await embedCorpus(
    'goemotions-dev',
    dev.map((e) => e.text),
  )
  const devLogits = devEmbeddings.map((x) => logits(emotions, x))
  const calibration: Record<string, { threshold: number; f1: number; support: number }> = {}
  EMOTIONS.forEach((emotion: Emotion, k) => {
    const truth = dev.map((e) => e.emotions!.includes(indices[k]!))
    const support = truth.filter(Boolean).length
    let best = { threshold: 0.5, f1: 0 }
    for (let t = 0.05; t < 0.951; t += 0.01) {
      let tp = 0
      let fp = 0
      devLogits.forEach((z, i) => {
        if (sigmoid(z[k]!) >= t) {
          if (truth[i]) tp++
          else fp++
        }
      })
      const f1 = (2 * tp) / (2 * tp + fp + (support - tp))
      if (f1 > best.f1) best = { threshold: t, f1 }
    }
    emotions.bias[k]! -= Math.log(best.threshold / (1 - best.threshold))
    calibration[emotion] = {
      threshold: Math.round(best.threshold * 100) / 100,
      f1: Math.round(best.f1 * 1000) / 1000,
      support,
    }
  })
  console.table(calibration)

  const file: SentimentModelFile = {
    about:
      'Learned sentiment and emotion heads on all-MiniLM-L6-v2 embeddings; made by `npm run train:sentiment` ' +
      '(services/analysis/train/train-sentiment.ts). Trained on GoEmotions (Demszky et al. 2020, Google Research, ' +
      'CC BY 4.0), VADER ground-truth snippets (Hutto & Gilbert 2014, MIT) and anchor phrases written for this project.',
    embeddingModel: model.version.split('+')[0]!,
    sentiment: { classes: [...POLARITIES], inputs: 'embedding+lexical', ...round(sentiment, [0, 1, 2]) },
    frustration: round(frustration, [0]),
    emotions: {
      labels: [...EMOTIONS],
      calibration,
      ...round(
        emotions,
        EMOTIONS.map((_, k) => k),
      ),
    },
  }
  writeFileSync(MODEL_FILE, `${JSON.stringify(file)}\n`)
  console.log(`wrote ${path.relative(process.cwd(), MODEL_FILE)}`)
}

await main()
