/**
 * The learned escalation head (issue 32): one sigmoid on a MiniLM embedding, read by the signals on each
 * unit of an end user's message (the whole, each sentence: signals/cues.ts, escalationUnits) beside the
 * escalation anchors' margin. Trained by `npm run train:sentiment -- --only escalation`; read
 * cross-validated by `npm run train:sentiment -- --cross-validate --only escalation`.
 *
 * Sources, each side (escalation / not) weighing the same in total:
 * - escalation: the lines of data/support-escalation.jsonl labelled so (a request for a person, a call
 *   back, a staff member's contact to reach them), weight 1;
 * - not: that file's other lines (people named in reports, service visits, a third party's contact,
 *   plain requests, complaints, thanks), and each sentence of those with several (a sentence of a message
 *   that asks for no one asks for no one), weight NEGATIVE_WEIGHTS.own; the support messages labelled for
 *   frustration (data/support-frustration*.jsonl) but those naming a person, a call or a team
 *   (PERSON_WORDS: some ask for one), weight NEGATIVE_WEIGHTS.frustration; CLINC150's train split
 *   (requests to an assistant), weight NEGATIVE_WEIGHTS.clinc.
 */

import { seededRandom } from '../src/seeded-random.ts'
import { sentencesOf } from '../src/signals/cues.ts'
import { clinc150Train, SUPPORT_FRUSTRATION_EXTRA, supportEscalation, supportFrustration } from './corpora.ts'
import { embedCorpus, embedParts } from './embeddings.ts'
import { binaryReading } from './evaluate.ts'
import { type LinearHead, logits, type Sample, sigmoid, stratifiedFolds, train } from './linear.ts'

/** The negative side's shares (the positive side weighs 1). Set before measuring, not swept. */
const NEGATIVE_WEIGHTS = { own: 0.5, frustration: 0.25, clinc: 0.25 } as const

/** The support messages labelled for frustration that name a person, a call or a team: left out (some ask for one). */
const PERSON_WORDS =
  /\b(human|person|people|agent|someone|somebody|anyone|anybody|manager|supervisor|staff|team|operator|representative|escalat\w*|call|ring|phone|speak|talk)\b/iu

const OPTIONS = {
  kind: 'sigmoid',
  epochs: 30,
  learningRate: 0.01,
  l2: 1e-6,
  batch: 256,
  seed: 1,
} as const

interface Side {
  readonly vectors: readonly Float32Array[]
  readonly weight: number
}

/** The escalation file's texts and, for the negatives of several sentences, their sentences. */
async function ownVectors() {
  const own = supportEscalation()
  const whole = await embedCorpus(
    'support-escalation',
    own.map((e) => e.text),
  )
  const parts = await embedParts(
    'support-escalation-sentences',
    own.map((e) => (e.escalation ? [] : sentencesOf(e.text))),
  )
  return { own, whole, parts }
}

async function otherNegatives(): Promise<Side[]> {
  const frustration = [...supportFrustration(), ...supportFrustration(SUPPORT_FRUSTRATION_EXTRA)]
    .filter((e) => e.kind !== 'human-request' && !PERSON_WORDS.test(e.text))
    .map((e) => e.text)
  const clinc = clinc150Train()
  return [
    {
      vectors: await embedCorpus('escalation-frustration-negatives', frustration),
      weight: NEGATIVE_WEIGHTS.frustration,
    },
    { vectors: await embedCorpus('clinc150-train', clinc), weight: NEGATIVE_WEIGHTS.clinc },
  ]
}

/** The samples, leaving out the escalation file's lines in `exclude` (cross-validation). */
export async function escalationSamples(exclude: ReadonlySet<number> = new Set()): Promise<Sample[]> {
  const { own, whole, parts } = await ownVectors()
  const kept = own.map((_, i) => i).filter((i) => !exclude.has(i))
  const positives = kept.filter((i) => own[i]!.escalation).map((i) => whole[i]!)
  const negatives = kept.filter((i) => !own[i]!.escalation).flatMap((i) => [whole[i]!, ...parts[i]!])
  const sides: (Side & { y: number })[] = [
    { vectors: positives, weight: 1, y: 1 },
    { vectors: negatives, weight: NEGATIVE_WEIGHTS.own, y: 0 },
    ...(await otherNegatives()).map((s) => ({ ...s, y: 0 })),
  ]
  return sides.flatMap((side) =>
    side.vectors.map((x) => ({ x, y: [side.y], weight: (side.weight * 10_000) / side.vectors.length })),
  )
}

export async function trainEscalation(): Promise<LinearHead> {
  return train(await escalationSamples(), 1, OPTIONS)
}

const FOLDS = 5

/**
 * The head's cross-validated reading of data/support-escalation.jsonl: a seeded split within each class
 * into FOLDS, each fold read by a head trained without it (the other sources always in), on the whole
 * text and on its best unit (the whole or a sentence, as the signals read it); per kind too. Printed.
 */
export async function crossValidateEscalation(): Promise<void> {
  const { own, whole } = await ownVectors()
  const sentences = await embedParts(
    'support-escalation-units',
    own.map((e) => sentencesOf(e.text)),
  )
  const fold = stratifiedFolds(
    own.map((e) => e.escalation),
    FOLDS,
    seededRandom(OPTIONS.seed),
  )
  const readWhole = new Array<number>(own.length)
  const readBest = new Array<number>(own.length)
  for (let f = 0; f < FOLDS; f++) {
    const held = new Set(own.map((_, i) => i).filter((i) => fold[i] === f))
    const head = train(await escalationSamples(held), 1, OPTIONS)
    const read = (x: Float32Array) => sigmoid(logits(head, x)[0]!)
    for (const i of held) {
      readWhole[i] = read(whole[i]!)
      readBest[i] = Math.max(readWhole[i]!, ...sentences[i]!.map(read))
    }
    process.stderr.write(`  fold ${f + 1}/${FOLDS}\n`)
  }
  const rows: Record<string, { accuracy: number; precision: number; recall: number }> = {}
  const labels = own.map((e) => e.escalation)
  for (const [name, reading] of [
    ['whole text', readWhole],
    ['best unit', readBest],
  ] as const)
    for (const threshold of [0.5, 0.7, 0.9]) {
      rows[`${name}, ≥ ${threshold}`] = binaryReading(labels, reading, threshold)
    }
  console.log(`escalation head on the ${own.length} texts of support-escalation.jsonl, ${FOLDS}-fold:`)
  console.table(rows)
  const kinds: Record<string, { escalation: boolean; lines: number; right: number }> = {}
  own.forEach((e, i) => {
    const key = `${e.escalation ? 'yes' : 'no'} ${e.kind}`
    kinds[key] ??= { escalation: e.escalation, lines: 0, right: 0 }
    kinds[key]!.lines++
    if (readBest[i]! >= 0.5 === e.escalation) kinds[key]!.right++
  })
  for (const k of Object.values(kinds)) k.right = Math.round((k.right / k.lines) * 100) / 100
  console.log('by kind, the share read right (best unit, ≥ 0.5):')
  console.table(kinds)
}
