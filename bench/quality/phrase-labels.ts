/**
 * Phrase labels for the bench (issue 31, item 5; bench/FINDINGS.md "phrase labels nearest the topic's centroid"): a
 * topic named by one of its members' own phrases, chosen with the embedding model as KeyBERT does. The
 * candidates are the topic's terms that two or more of its members use (topics/terms.ts: content words and
 * adjacent pairs of them, "track order", "reset password"); each is embedded alone with the same model as the
 * requests, and a labeller ranks them by their similarity to the topic's centroid:
 * - nearest: the candidate most similar to the centroid (KeyBERT); nearest two-word phrase: the same, a phrase of
 *   two words preferred to a single word;
 * - contrast μ: that similarity less μ times the candidate's highest similarity to another topic's centroid of
 *   the same chatbot (maximal marginal relevance across topics: a phrase that names this topic and no other);
 * - MMR λ: two phrases, the second maximising λ·(its similarity to the centroid) − (1 − λ)·(its similarity to
 *   the first) (Carbonell and Goldstein's MMR within one topic, as KeyBERT's `use_mmr`).
 * Labels are then made distinct within the chatbot as the service does: in order of topic size, a topic whose
 * first choice is taken gets its next candidate.
 */

export type Vector = Float32Array

export interface PhraseTopic {
  readonly centroid: Vector
  readonly terms: ReadonlyMap<string, number>
  readonly size: number
}

/** At most this many candidates a topic, its most used terms first: the phrases to embed stay bounded. */
export const MAX_CANDIDATES = 30

/** The terms two or more members use, the most used first (ties by term); every term when none repeats. */
export function phraseCandidates(terms: ReadonlyMap<string, number>): string[] {
  const all = [...terms].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  const repeated = all.filter(([, n]) => n >= 2)
  return (repeated.length > 0 ? repeated : all).slice(0, MAX_CANDIDATES).map(([term]) => term)
}

function cosine(a: Vector, b: Vector): number {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}

type Embeddings = ReadonlyMap<string, Vector>

/** The candidates ranked by similarity to the centroid less μ times their nearest other centroid. */
export function rankByContrast(
  candidates: readonly string[],
  vectors: Embeddings,
  centroid: Vector,
  others: readonly Vector[],
  mu: number,
): string[] {
  return candidates
    .map((c) => {
      const v = vectors.get(c)!
      const rival = mu === 0 || others.length === 0 ? 0 : Math.max(...others.map((o) => cosine(v, o)))
      return { c, s: cosine(v, centroid) - mu * rival }
    })
    .sort((a, b) => b.s - a.s || (a.c < b.c ? -1 : 1))
    .map((x) => x.c)
}

/** Up to `k` phrases by maximal marginal relevance: each next one near the centroid and far from those chosen. */
export function mmrPhrases(
  candidates: readonly string[],
  vectors: Embeddings,
  centroid: Vector,
  k: number,
  lambda: number,
): string[] {
  const picked: string[] = []
  const left = [...candidates]
  while (picked.length < k && left.length > 0) {
    let best = 0
    let bestScore = Number.NEGATIVE_INFINITY
    left.forEach((c, i) => {
      const v = vectors.get(c)!
      // A word of a phrase already chosen adds nothing to the label ("order" after "track order").
      if (picked.some((p) => p.split(' ').includes(c) || c.split(' ').includes(p))) return
      const redundancy = picked.length === 0 ? 0 : Math.max(...picked.map((p) => cosine(v, vectors.get(p)!)))
      const score = lambda * cosine(v, centroid) - (1 - lambda) * redundancy
      if (score > bestScore) {
        bestScore = score
        best = i
      }
    })
    if (bestScore === Number.NEGATIVE_INFINITY) break
    picked.push(left.splice(best, 1)[0]!)
  }
  return picked
}

/**
 * One label a topic from its ranked choices, none twice within the chatbot: the larger topics choose first; a
 * topic whose every choice is taken keeps its first, numbered (as labels.ts `distinctLabel` does).
 */
export function distinctChoices(
  topics: readonly { readonly size: number }[],
  ranked: readonly (readonly string[])[],
): string[] {
  const order = topics.map((_, i) => i).sort((a, b) => topics[b]!.size - topics[a]!.size || a - b)
  const taken = new Set<string>()
  const out: string[] = new Array(topics.length).fill('')
  for (const i of order) {
    const choices = ranked[i]!
    let label = choices.find((c) => !taken.has(c))
    if (label === undefined) {
      const first = choices[0] ?? ''
      for (let n = 2; label === undefined; n++) if (!taken.has(`${first} (${n})`)) label = `${first} (${n})`
    }
    taken.add(label)
    out[i] = label
  }
  return out
}

/**
 * Every phrase labeller's labels for `topics` (in their order), given the embeddings of their candidates: a
 * map from labeller name to one label a topic. `mus` and `lambdas` are the values compared (chosen on CLINC150
 * validation).
 */
export function phraseLabellers(
  topics: readonly (PhraseTopic & { readonly label: string })[],
  vectors: Embeddings,
  mus: readonly number[],
  lambdas: readonly number[],
): Map<string, string[]> {
  const candidates = topics.map((t) => phraseCandidates(t.terms))
  const centroids = topics.map((t) => t.centroid)
  const out = new Map<string, string[]>()
  for (const mu of mus) {
    const ranked = topics.map((t, i) =>
      rankByContrast(
        candidates[i]!,
        vectors,
        t.centroid,
        centroids.filter((_, j) => j !== i),
        mu,
      ),
    )
    const phrases = distinctChoices(topics, ranked)
    out.set(mu === 0 ? 'nearest phrase' : `contrast phrase, mu ${mu}`, phrases)
    if (mu === 0) {
      // The same ranking with the phrases of two words first: a request named by its verb and object, or its noun phrase.
      const pairsFirst = ranked.map((r) => [
        ...r.filter((c) => c.includes(' ')),
        ...r.filter((c) => !c.includes(' ')),
      ])
      out.set('nearest two-word phrase', distinctChoices(topics, pairsFirst))
      out.set(
        'nearest phrase · three terms',
        phrases.map((p, i) => (p === '' ? topics[i]!.label : `${p} · ${topics[i]!.label}`)),
      )
    }
  }
  for (const lambda of lambdas) {
    const ranked = topics.map((t, i) => {
      const two = mmrPhrases(candidates[i]!, vectors, t.centroid, 2, lambda)
      return two.length === 0 ? [] : [two.join(', ')]
    })
    out.set(`MMR two phrases, lambda ${lambda}`, distinctChoices(topics, ranked))
  }
  return out
}
