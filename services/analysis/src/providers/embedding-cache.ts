/**
 * Embeddings kept by text, the least recently used dropped first beyond `size` (greetings and stock
 * phrases recur: "where is my order?"). Each call answers from the vectors it found and the ones it had
 * made, never from the cache after the fact: inserting a call's new texts may evict its own hits, and a
 * concurrent call may evict them while the model runs, yet every text gets its vector. (It did not: a
 * call whose hits were the oldest entries got `undefined` for them once the cache was full.) A text given
 * twice in one call is embedded once.
 */
export function cachedEmbedder(
  embed: (texts: readonly string[]) => Promise<Float32Array[]>,
  size: number,
): (texts: readonly string[]) => Promise<Float32Array[]> {
  const cache = new Map<string, Float32Array>()
  const remember = (text: string, vector: Float32Array) => {
    // A Map iterates in insertion order: deleting and setting again makes the text the most recent.
    cache.delete(text)
    cache.set(text, vector)
    if (cache.size > size) cache.delete(cache.keys().next().value!)
  }
  return async (texts) => {
    const found = new Map<string, Float32Array>()
    const missing = new Set<string>()
    for (const text of texts) {
      if (found.has(text) || missing.has(text)) continue
      const hit = cache.get(text)
      if (hit) {
        found.set(text, hit)
        remember(text, hit)
      } else missing.add(text)
    }
    if (missing.size > 0) {
      const vectors = await embed([...missing])
      for (const [i, text] of [...missing].entries()) {
        found.set(text, vectors[i]!)
        remember(text, vectors[i]!)
      }
    }
    return texts.map((text) => found.get(text)!)
  }
}
