/**
 * Embeddings kept by text, the least recently used dropped first beyond `size` (greetings and stock
 * phrases recur: "where is my order?"). Each call answers from the vectors it found and the ones it had
 * made, never from the cache after the fact: inserting a call's new texts may evict its own hits, and a
 * concurrent call may evict them while the model runs, yet every text gets its vector. (It did not: a
 * call whose hits were the oldest entries got `undefined` for them once the cache was full.) A text given
 * twice in one call is embedded once, and so is a text that concurrent calls ask for: a call waits for the
 * vector another call is having made rather than asking the model again. (With the analyzer in the calling
 * thread, ANALYSIS_THREADS=0, the jobs analysed together each embedded the bot's stock replies and the
 * greetings before any had them cached: DSTC11's 1,608 distinct texts took 1,857 model runs.) If that
 * other call fails, the text is embedded by the call that waited.
 */
export function cachedEmbedder(
  embed: (texts: readonly string[]) => Promise<Float32Array[]>,
  size: number,
): (texts: readonly string[]) => Promise<Float32Array[]> {
  const cache = new Map<string, Float32Array>()
  /** The texts a call is having embedded, until the model answers it. */
  const inFlight = new Map<string, Promise<Float32Array>>()
  const remember = (text: string, vector: Float32Array) => {
    // A Map iterates in insertion order: deleting and setting again makes the text the most recent.
    cache.delete(text)
    cache.set(text, vector)
    if (cache.size > size) cache.delete(cache.keys().next().value!)
  }
  const embedMissing = async (missing: readonly string[]): Promise<Float32Array[]> => {
    const vectors = embed(missing)
    const mine = missing.map((_, i) => vectors.then((v) => v[i]!))
    for (const [i, text] of missing.entries()) {
      mine[i]!.catch(() => {})
      inFlight.set(text, mine[i]!)
    }
    try {
      const made = await vectors
      for (const [i, text] of missing.entries()) remember(text, made[i]!)
      return made
    } finally {
      for (const [i, text] of missing.entries()) if (inFlight.get(text) === mine[i]) inFlight.delete(text)
    }
  }
  return async (texts) => {
    const found = new Map<string, Float32Array>()
    const missing = new Set<string>()
    const awaited = new Map<string, Promise<Float32Array>>()
    for (const text of texts) {
      if (found.has(text) || missing.has(text) || awaited.has(text)) continue
      const hit = cache.get(text)
      if (hit) {
        found.set(text, hit)
        remember(text, hit)
        continue
      }
      const pending = inFlight.get(text)
      if (pending) awaited.set(text, pending)
      else missing.add(text)
    }
    const own = missing.size > 0 ? embedMissing([...missing]) : Promise.resolve([])
    own.catch(() => {})
    for (const [text, pending] of awaited) {
      found.set(text, await pending.catch(async () => (await embedMissing([text]))[0]!))
    }
    const made = await own
    for (const [i, text] of [...missing].entries()) found.set(text, made[i]!)
    return texts.map((text) => found.get(text)!)
  }
}
