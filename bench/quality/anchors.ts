/**
 * The anchors topic discovery is judged beside, computed in the same run on the same requests and the
 * service's own embeddings (issue 31): TF-IDF + k-means told the number of intents (the classic
 * baseline), MiniLM + k-means told it (what the embeddings can do when told), and MiniLM + k-means with k
 * chosen by silhouette, not told it (DSTC11 track 2's baseline; the bar the service must reach).
 */
import { dense, kmeans, tfidf } from './kmeans.ts'
import { type ClusteringScore, scoreClustering } from './metrics.ts'
import { kmeansBySilhouette, type SilhouetteChoice, sweepBound } from './silhouette.ts'

export interface Anchor {
  readonly name: string
  readonly score: ClusteringScore
  readonly seconds: number
  readonly note?: string
  /** k by silhouette: the chosen k is an end of the sweep, where it stopped, not a maximum. */
  readonly atBound?: boolean
}

export interface Anchors {
  readonly tfidf: Anchor
  readonly embeddingsToldK: Anchor
  readonly silhouette: Anchor
}

export function computeAnchors(
  texts: readonly string[],
  intents: readonly string[],
  embeddings: readonly Float32Array[],
  seed: number,
): Anchors {
  const k = new Set(intents).size
  const timed = <T>(f: () => T): [T, number] => {
    const started = performance.now()
    const value = f()
    return [value, (performance.now() - started) / 1000]
  }
  const [tfidfLabels, tfidfSeconds] = timed(() => kmeans(tfidf(texts), k, { seed }))
  const [toldLabels, toldSeconds] = timed(() => kmeans(dense(embeddings), k, { seed }))
  const score = (labels: readonly number[]) => scoreClustering(intents, labels.map(String))
  // Timed with the scoring of the ks near the best, which only the report needs.
  const [[choice, near], choiceSeconds] = timed(() => {
    const choice = kmeansBySilhouette(embeddings, { seed })
    return [choice, nearBestNote(choice, score)] as const
  })
  const curve = [...choice.scores]
    .sort((a, b) => a.k - b.k)
    .map((s) => `${s.k}: ${s.silhouette.toFixed(3)}`)
    .join(', ')
  return {
    tfidf: { name: `TF-IDF + k-means, told k = ${k}`, score: score(tfidfLabels), seconds: tfidfSeconds },
    embeddingsToldK: {
      name: `MiniLM + k-means, told k = ${k}`,
      score: score(toldLabels),
      seconds: toldSeconds,
    },
    silhouette: {
      name: `MiniLM + k-means, k by silhouette (not told k): k = ${choice.k}${choice.atBound ? " (at the sweep's end)" : ''}`,
      score: score(choice.labels),
      seconds: choiceSeconds,
      note: [
        `silhouette by k (sampled, Euclidean on unit vectors): ${curve}`,
        sweepNote(choice, texts.length),
        near,
      ].join('. '),
      atBound: choice.atBound,
    },
  }
}

/** Where the sweep went, and whether its best k is a maximum or only where it stopped. */
export function sweepNote(choice: SilhouetteChoice, n: number): string {
  const tried = choice.scores.map((s) => s.k)
  const range = `k = ${Math.min(...tried)}–${Math.max(...tried)}`
  const extended =
    choice.extended.length > 0
      ? `, extended past n / 10 = ${Math.floor(n / 10)} to ${choice.extended.join(', ')} while the best was the last k tried`
      : ''
  const verdict = choice.atBound
    ? `the best, k = ${choice.k}, is an end of the sweep (${choice.k === 2 ? 'its least k' : `bound n / 5 = ${sweepBound(n)}`}): where the sweep stopped, not a maximum of the curve`
    : `the best, k = ${choice.k}, lies inside it`
  return `Swept ${range}${extended}; ${verdict}`
}

/**
 * The ks within two standard errors of the best silhouette, and what the clustering scores across them
 * (scored against the intents only for the report: the choice never sees them).
 */
export function nearBestNote(
  choice: SilhouetteChoice,
  score: (labels: readonly number[]) => ClusteringScore,
): string {
  const within = `within two standard errors (${(2 * choice.standardError).toFixed(4)}) of the best silhouette`
  if (choice.nearBest.length <= 1) return `No other k tried is ${within}`
  const scored = choice.nearBest.map((k) => score(choice.nearBestLabels.get(k)!))
  const span = (xs: number[]) => `${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}`
  return (
    `${choice.nearBest.length} ks tried are ${within}, k = ${choice.nearBest.join(', ')}: the curve is flat there, ` +
    `so which of them wins is the sample's and the seeding's doing; across them (one seeding each) ` +
    `NMI ${span(scored.map((s) => s.nmi))}, ACC ${span(scored.map((s) => s.acc))}`
  )
}
