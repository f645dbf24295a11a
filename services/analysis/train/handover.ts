/**
 * The learned handover head (issue 32, signals-v20): one sigmoid on a MiniLM embedding, read by the signals
 * on each unit of an assistant's message (the whole, each sentence: signals/cues.ts, handoverUnits) beside
 * the handover anchors' margin. Trained by `npm run train:sentiment -- --only handover`.
 *
 * Sources: data/support-handover.jsonl, assistant messages written for it. Handing over (weight 1 in
 * total): a transfer to a person or team, a person arriving in the chat, a case or request passed to a
 * named team or person who will call, email or reply to the user. Not (weight 1 in total): answers,
 * actions done, a service visit or delivery booked (whoever will call or text before it), notices, a team
 * or a number or opening hours named without handing over, referrals outside, feedback passed on, failures
 * to hand over, offers, social acts and apologies alone, questions for a detail; each negative of several sentences also as its sentences (a
 * sentence of a message that hands nothing over hands nothing over). Read cross-validated by `npm run
 * train:sentiment -- --cross-validate --only handover`.
 */

import { seededRandom } from '../src/seeded-random.ts'
import { sentencesOf } from '../src/signals/cues.ts'
import { supportHandover } from './corpora.ts'
import { embedCorpus, embedParts } from './embeddings.ts'
import { binaryReading } from './evaluate.ts'
import { type LinearHead, logits, type Sample, sigmoid, stratifiedFolds, train } from './linear.ts'

/**
 * Set before measuring, not swept: a few hundred texts need more passes than the corpora of the other
 * heads, and a firmer L2.
 */
const OPTIONS = {
  kind: 'sigmoid',
  epochs: 200,
  learningRate: 0.01,
  l2: 1e-4,
  batch: 64,
  seed: 1,
} as const

/** Each line's text and sentences, embedded. */
async function ownVectors() {
  const own = supportHandover()
  const whole = await embedCorpus(
    'support-handover',
    own.map((e) => e.text),
  )
  const parts = await embedParts(
    'support-handover-sentences',
    own.map((e) => sentencesOf(e.text)),
  )
  return { own, whole, parts }
}

/** The samples, leaving out the lines in `exclude` (cross-validation): each side weighs 1 in total. */
export async function handoverSamples(exclude: ReadonlySet<number> = new Set()): Promise<Sample[]> {
  const { own, whole, parts } = await ownVectors()
  const kept = own.map((_, i) => i).filter((i) => !exclude.has(i))
  const positives = kept.filter((i) => own[i]!.handover).map((i) => whole[i]!)
  const negatives = kept.filter((i) => !own[i]!.handover).flatMap((i) => [whole[i]!, ...parts[i]!])
  return [
    ...positives.map((x) => ({ x, y: [1], weight: 1 / positives.length })),
    ...negatives.map((x) => ({ x, y: [0], weight: 1 / negatives.length })),
  ]
}

export async function trainHandover(): Promise<LinearHead> {
  return train(await handoverSamples(), 1, OPTIONS)
}

const FOLDS = 5

/**
 * The head's cross-validated reading of data/support-handover.jsonl: a seeded split within each class into
 * FOLDS, each fold read by a head trained without it, on its best unit (the whole or a sentence, as the
 * signals read it), at 0.5 and at the signals' bound; per kind at 0.5 too. Printed.
 */
export async function crossValidateHandover(): Promise<void> {
  const { own, whole, parts } = await ownVectors()
  const fold = stratifiedFolds(
    own.map((e) => e.handover),
    FOLDS,
    seededRandom(OPTIONS.seed),
  )
  const best = new Array<number>(own.length)
  for (let f = 0; f < FOLDS; f++) {
    const held = new Set(own.map((_, i) => i).filter((i) => fold[i] === f))
    const head = train(await handoverSamples(held), 1, OPTIONS)
    const read = (x: Float32Array) => sigmoid(logits(head, x)[0]!)
    for (const i of held) best[i] = Math.max(read(whole[i]!), ...parts[i]!.map(read))
    process.stderr.write(`  fold ${f + 1}/${FOLDS}\n`)
  }
  const rows: Record<string, { accuracy: number; precision: number; recall: number }> = {}
  for (const threshold of [0.5, 0.92]) {
    rows[`best unit, >= ${threshold}`] = binaryReading(
      own.map((e) => e.handover),
      best,
      threshold,
    )
  }
  console.log(`handover head on the ${own.length} texts of support-handover.jsonl, ${FOLDS}-fold:`)
  console.table(rows)
  const kinds: Record<string, { lines: number; right: number }> = {}
  own.forEach((e, i) => {
    const key = `${e.handover ? 'yes' : 'no'} ${e.kind}`
    kinds[key] ??= { lines: 0, right: 0 }
    kinds[key].lines++
    if (best[i]! >= 0.5 === e.handover) kinds[key].right++
  })
  console.table(
    Object.fromEntries(
      Object.entries(kinds).map(([k, v]) => [
        k,
        { ...v, share: Math.round((v.right / v.lines) * 1000) / 1000 },
      ]),
    ),
  )
}
