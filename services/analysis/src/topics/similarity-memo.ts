import { similarities } from './agglomerative.ts'
import { dot, type Vector } from './vectors.ts'

/**
 * The similarity matrix of a chatbot's last theme grouping, kept to reuse its entries at the next one
 * (themes.ts `clusterCentroids`). Grouping runs at each topic decision that changes the topics' ids or
 * labels, and between two of them most topics' centroids are the same objects (a topic's centroid is
 * replaced, never written in place, when members join it): the n(n−1)/2 dot products of d dimensions were
 * most of a grouping's time (bench/FINDINGS.md "themecost"). Exact: an entry is reused only when both
 * vectors are the very objects of the last call and hold the same bits as then (compared with a copy taken
 * then), so the matrix is the one `similarities` computes, bit for bit. Not shared between chatbots; kept
 * with the chatbot's cached topic state (TopicState.themeSimilarities).
 */
export class SimilarityMemo {
  private vectors: readonly Vector[] = []
  private indexOf = new Map<Vector, number>()
  /** The last call's vectors' bits, each at index·d. */
  private bits = new Uint32Array(0)
  private matrix = new Float32Array(0)
  /** Dot products computed and entries reused, over all calls: what bench/theme-cost.ts reports. */
  computed = 0
  reused = 0

  /** The vectors' similarity matrix (n×n, zero diagonal), as `similarities` gives it; read-only. */
  similarities(vectors: readonly Vector[]): Float32Array {
    const n = vectors.length
    const d = n === 0 ? 0 : vectors[0]!.length
    if (vectors.some((v) => v.length !== d)) {
      this.forget()
      this.computed += (n * (n - 1)) / 2
      return similarities(vectors)
    }
    // Each vector's index in the last call, when it is the same object with the same bits, else -1.
    const before = vectors.map((v) => {
      const i = this.indexOf.get(v)
      if (i === undefined || v.length !== d) return -1
      const now = bitsOf(v)
      for (let x = 0; x < d; x++) if (now[x] !== this.bits[i * d + x]) return -1
      return i
    })
    const m = this.vectors.length
    const sim = new Float32Array(n * n)
    for (let i = 0; i < n; i++) {
      const bi = before[i]!
      for (let j = i + 1; j < n; j++) {
        const bj = before[j]!
        let s: number
        // One object twice in the list: its two indices are one in the last call, whose entry is the diagonal.
        if (bi >= 0 && bj >= 0 && bi !== bj) {
          s = this.matrix[bi * m + bj]!
          this.reused++
        } else {
          s = dot(vectors[i]!, vectors[j]!)
          this.computed++
        }
        sim[i * n + j] = s
        sim[j * n + i] = s
      }
    }
    this.vectors = [...vectors]
    this.indexOf = new Map(vectors.map((v, i) => [v, i]))
    this.bits = new Uint32Array(n * d)
    for (let i = 0; i < n; i++) this.bits.set(bitsOf(vectors[i]!), i * d)
    this.matrix = sim
    return sim
  }

  private forget(): void {
    this.vectors = []
    this.indexOf = new Map()
    this.bits = new Uint32Array(0)
    this.matrix = new Float32Array(0)
  }
}

const bitsOf = (v: Vector) => new Uint32Array(v.buffer, v.byteOffset, v.length)
