/**
 * The anchors topic discovery is judged beside, computed in the same run on the same requests and the
 * service's own embeddings (issue 31): TF-IDF + k-means told the number of intents (the classic
 * baseline), MiniLM + k-means told it (what the embeddings can do when told), and MiniLM + k-means with k
 * chosen by silhouette, not told it (DSTC11 track 2's baseline; the bar the service must reach).
 */
import { dense, kmeans, tfidf } from './kmeans.ts'
import { type ClusteringScore, scoreClustering } from './metrics.ts'
import { kmeansBySilhouette } from './silhouette.ts'

export interface Anchor {
  readonly name: string
  readonly score: ClusteringScore
  readonly seconds: number
  readonly note?: string
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
  const [choice, choiceSeconds] = timed(() => kmeansBySilhouette(embeddings, { seed }))
  const score = (labels: readonly number[]) => scoreClustering(intents, labels.map(String))
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
      name: `MiniLM + k-means, k by silhouette (not told k): k = ${choice.k}`,
      score: score(choice.labels),
      seconds: choiceSeconds,
      note: `silhouette by k (sampled, Euclidean on unit vectors): ${curve}`,
    },
  }
}
