/**
 * The learned handover head (issue 32, signals-v20): one sigmoid on a MiniLM embedding, read by the signals
 * on each unit of an assistant's message (the whole, each sentence: signals/cues.ts, handoverUnits) beside
 * the handover anchors' margin. Trained by `npm run train:sentiment -- --only handover`.
 *
 * Sources: data/support-handover.jsonl, assistant messages written for it. Handing over (weight 1 in
 * total): a transfer to a person or team, a person arriving in the chat, a case or request passed to a
 * named team or person who will call, email or reply to the user. Not (weight 1 in total): answers,
 * actions done, a service visit or delivery booked (whoever will call or text before it), notices, a team
 * or a number named without handing over, referrals outside, feedback passed on, failures to hand over,
 * offers, social acts, questions for a detail; each negative of several sentences also as its sentences (a
 * sentence of a message that hands nothing over hands nothing over).
 */

import { sentencesOf } from '../src/signals/cues.ts'
import { supportHandover } from './corpora.ts'
import { embedCorpus } from './embeddings.ts'
import { type LinearHead, type Sample, train } from './linear.ts'

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

export async function handoverSamples(): Promise<Sample[]> {
  const own = supportHandover()
  const positives = await embedCorpus(
    'support-handover-positives',
    own.filter((e) => e.handover).map((e) => e.text),
  )
  const negatives = await embedCorpus(
    'support-handover-negatives',
    own.filter((e) => !e.handover).flatMap((e) => [e.text, ...sentencesOf(e.text)]),
  )
  return [
    ...positives.map((x) => ({ x, y: [1], weight: 1 / positives.length })),
    ...negatives.map((x) => ({ x, y: [0], weight: 1 / negatives.length })),
  ]
}

export async function trainHandover(): Promise<LinearHead> {
  return train(await handoverSamples(), 1, OPTIONS)
}
