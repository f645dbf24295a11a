import { describe, expect, it } from 'vitest'
import { cachedEmbedder } from './embedding-cache.ts'

/** A vector that names its text, and the texts each call of the model was given. */
function model() {
  const calls: string[][] = []
  const vectorOf = (text: string) => Float32Array.from(text, (c) => c.charCodeAt(0))
  const embed = async (texts: readonly string[]) => {
    calls.push([...texts])
    return texts.map(vectorOf)
  }
  return { calls, vectorOf, embed }
}

describe('the embedding cache', () => {
  it('gives every text its vector when the call evicts its own hits (the cache full of older texts)', async () => {
    const m = model()
    const embed = cachedEmbedder(m.embed, 3)
    await embed(['a', 'b', 'c'])
    // 'a' is a hit and the oldest entry; 'd', 'e', 'f' evict everything before them, 'a' included.
    const texts = ['a', 'd', 'e', 'f']
    expect(await embed(texts)).toEqual(texts.map(m.vectorOf))
    expect(m.calls).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e', 'f'],
    ])
  })

  it('gives a call its hits when a concurrent call evicts them while the model runs', async () => {
    const m = model()
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let first = true
    const embed = cachedEmbedder(async (texts) => {
      if (first) {
        first = false
        return m.embed(texts)
      }
      if (texts.includes('slow')) await held
      return m.embed(texts)
    }, 2)
    await embed(['a'])
    const slow = embed(['a', 'slow'])
    // Meanwhile another call fills the cache with two new texts: 'a' is gone from it.
    expect(await embed(['x', 'y'])).toEqual(['x', 'y'].map(m.vectorOf))
    release()
    expect(await slow).toEqual(['a', 'slow'].map(m.vectorOf))
  })

  it('drops the least recently used text first, not the first one put in', async () => {
    const m = model()
    const embed = cachedEmbedder(m.embed, 2)
    await embed(['greeting'])
    await embed(['b'])
    await embed(['greeting']) // used again: now the most recent
    await embed(['c']) // evicts 'b'
    await embed(['greeting'])
    expect(m.calls).toEqual([['greeting'], ['b'], ['c']])
    await embed(['b'])
    expect(m.calls.at(-1)).toEqual(['b'])
  })

  it('embeds a text given twice in one call once, and keeps the order of the texts', async () => {
    const m = model()
    const embed = cachedEmbedder(m.embed, 10)
    expect(await embed(['q', 'p', 'q'])).toEqual(['q', 'p', 'q'].map(m.vectorOf))
    expect(m.calls).toEqual([['q', 'p']])
    expect(await embed([])).toEqual([])
    expect(m.calls).toHaveLength(1)
  })

  it('embeds a text that concurrent calls ask for once: a call waits for the vector another is having made', async () => {
    // Regression: with the analyzer in the calling thread, jobs analysed together each embedded the bot's
    // stock replies before any had them cached (DSTC11: 1,857 model runs for 1,608 distinct texts).
    const m = model()
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const embed = cachedEmbedder(async (texts) => {
      await held
      return m.embed(texts)
    }, 10)
    const first = embed(['reply', 'a'])
    const second = embed(['b', 'reply'])
    release()
    expect(await first).toEqual(['reply', 'a'].map(m.vectorOf))
    expect(await second).toEqual(['b', 'reply'].map(m.vectorOf))
    expect(m.calls).toEqual([['reply', 'a'], ['b']])
  })

  it('embeds a text itself when the call it waited for fails', async () => {
    const m = model()
    let fail = () => {}
    const failing = new Promise<void>((_, reject) => {
      fail = () => reject(new Error('the model failed'))
    })
    failing.catch(() => {})
    let first = true
    const embed = cachedEmbedder(async (texts) => {
      if (first) {
        first = false
        await failing
      }
      return m.embed(texts)
    }, 10)
    const failed = embed(['reply'])
    const waiting = embed(['reply', 'b'])
    fail()
    await expect(failed).rejects.toThrow('the model failed')
    expect(await waiting).toEqual(['reply', 'b'].map(m.vectorOf))
    expect(m.calls).toEqual([['b'], ['reply']])
  })
})
