import { describe, expect, it } from 'vitest'
import { REPLY_REQUEST_ANCHORS } from './answers.ts'
import {
  clauseAsks,
  clauseAsksNothing,
  clausesOf,
  everySentenceOf,
  FOLLOW_UP_MARGIN,
  isDatum,
  isSocial,
  REQUEST_ANCHORS,
  requestEmbeddings,
  requestsMakingTopics,
  SOCIAL_MARGIN,
  socialMargin,
} from './requests.ts'
import { isSocialFormula } from './social-formulas.ts'
import { normalized } from './vectors.ts'

/** Unit vectors in 4 dimensions: axis 0 a social act, axis 1 a request, 2 and 3 anything else. */
const unit = (...v: number[]) => normalized(Float32Array.from(v))
const anchors = { social: [unit(1, 0, 0, 0), unit(1, 0, 1, 0)], request: [unit(0, 1, 0, 0)] }
const SOCIAL = unit(1, 0, 0, 0)
const REQUEST = unit(0, 1, 0, 0)

describe('only requests make topics: the decision', () => {
  it("scores a message by how much nearer it lies to a social anchor than to a request's", () => {
    expect(socialMargin(SOCIAL, anchors)).toBeCloseTo(1)
    expect(socialMargin(REQUEST, anchors)).toBeCloseTo(-1)
    // Its nearest anchor of each kind counts, not their mean.
    expect(socialMargin(unit(1, 0, 1, 0), anchors)).toBeCloseTo(1)
  })

  it('counts a message unlike both kinds as a request: the doubt goes to keeping a topic', () => {
    const elsewhere = unit(0, 0, 0, 1)
    expect(socialMargin(elsewhere, anchors)).toBeCloseTo(0)
    expect(isSocial([socialMargin(elsewhere, anchors)])).toBe(false)
  })

  it('is social only when the whole message and each of its clauses reach the margin', () => {
    expect(isSocial([SOCIAL_MARGIN])).toBe(true)
    expect(isSocial([SOCIAL_MARGIN - 0.01])).toBe(false)
    expect(isSocial([0.9, 0.8])).toBe(true)
    // "hi, my card was declined": the greeting is social, the clause after it is not.
    expect(isSocial([0.5, 0.9, -0.4])).toBe(false)
    expect(isSocial([])).toBe(false)
  })

  it('splits a message into clauses at sentence ends, commas, colons and dashes', () => {
    expect(clausesOf('hi, my card was declined')).toEqual(['hi', 'my card was declined'])
    expect(clausesOf('Thanks! One more thing: how do I export?')).toEqual([
      'Thanks',
      'One more thing',
      'how do I export',
    ])
    expect(clausesOf('ok - thanks')).toEqual(['ok', 'thanks'])
    expect(clausesOf('a well-known issue')).toEqual(['a well-known issue'])
    expect(clausesOf('... :)')).toEqual([])
    const long = `${'my export fails, '.repeat(30)}why`
    expect(clausesOf(long)).toEqual([long])
  })

  it('reads a message over 300 characters sentence by sentence, a sentence that long as one clause', () => {
    const sentence = 'The export has failed again this morning, after the update.'
    const text = `${sentence} ${sentence} ${sentence} ${sentence} ${sentence} Thanks anyway, I'll try the app.`
    expect(text.length).toBeGreaterThan(300)
    expect(clausesOf(text)).toEqual([
      ...Array.from({ length: 5 }, () => [
        'The export has failed again this morning',
        'after the update',
      ]).flat(),
      'Thanks anyway',
      "I'll try the app",
    ])
    const longSentence = `${'my export fails, '.repeat(30)}why`
    expect(clausesOf(`${longSentence}. ok, thanks`)).toEqual([`${longSentence}.`, 'ok', 'thanks'])
  })

  it('splits a text into every one of its sentences, one for a single sentence (the signals read at most five)', () => {
    expect(everySentenceOf('Where is my parcel?')).toEqual(['Where is my parcel?'])
    const seven = Array.from({ length: 7 }, (_, i) => `Sentence number ${i + 1}.`)
    expect(everySentenceOf(seven.join(' '))).toEqual(seven)
    expect(everySentenceOf('first line\nsecond line… third! 42.')).toEqual([
      'first line',
      'second line…',
      'third!',
    ])
  })

  it('places a request by its whole embedding, or by its request clauses when the whole reads as social', async () => {
    const vectors: Record<string, Float32Array> = {
      'hi, where is my parcel': unit(3, 1, 0, 0),
      hi: SOCIAL,
      'where is my parcel': unit(0, 1, 1, 0),
      'ok, thanks': unit(1, 0, 0, 0),
      ok: SOCIAL,
      thanks: SOCIAL,
      'my parcel is late, why': REQUEST,
      'play some music': unit(0.1, 0.3, 0, 1),
    }
    const embedded: string[] = []
    const embed = async (texts: readonly string[]) => {
      embedded.push(...texts)
      return texts.map((t) => vectors[t]!)
    }
    const texts = ['hi, where is my parcel', 'ok, thanks', 'my parcel is late, why', 'play some music']
    // Requests of other kinds (axis 3) besides the support requests: how clearly a request asks.
    const anyKind = { social: anchors.social, request: [REQUEST, unit(0, 0, 0, 1)] }
    const placed = await requestEmbeddings(
      texts,
      texts.map((t) => vectors[t]!),
      { ...anchors, otherRequest: [unit(0, 0, 0, 1)] },
      embed,
    )
    // The greeting's clause is left out of where the message goes, and of how clearly it asks.
    expect(placed[0]!.embedding).toEqual(vectors['where is my parcel'])
    expect(placed[0]!.margin).toBeCloseTo(socialMargin(vectors['where is my parcel']!, anyKind))
    expect(placed[1]).toBeUndefined()
    expect(placed[2]!.embedding).toBe(REQUEST)
    expect(placed[2]!.margin).toBeCloseTo(socialMargin(REQUEST, anyKind))
    // A request unlike the support requests asks as clearly as one like them.
    const music = vectors['play some music']!
    expect(placed[3]!.embedding).toBe(music)
    expect(placed[3]!.margin).toBeCloseTo(socialMargin(music, anyKind))
    expect(placed[3]!.margin).toBeLessThan(socialMargin(music, anchors) - 0.5)
    // Only the messages social as a whole are split and embedded again.
    expect(embedded).toEqual(['hi', 'where is my parcel', 'ok', 'thanks'])
  })
  it('gives each request the margins socialMargin gives, bit for bit, each anchor compared once', async () => {
    // Issue 31: the nearest social anchor is read once for the gate and for how clearly a request asks, and
    // the nearest request of any kind is the nearer of the support requests' and the others' nearest.
    let seed = 7
    const random = () => {
      seed = (seed * 16807) % 2147483647
      return seed / 2147483647 - 0.5
    }
    const vector = () => normalized(Float32Array.from({ length: 16 }, random))
    const many = (n: number) => Array.from({ length: n }, vector)
    const wide = { social: many(9), request: many(5), otherRequest: many(4) }
    const anyKind = { social: wide.social, request: [...wide.request, ...wide.otherRequest] }
    // Half the messages near a social anchor (social as a whole, so read clause by clause), half anywhere.
    const nearSocial = (i: number) => {
      const v = Float32Array.from(wide.social[i % 9]!)
      for (const [k, x] of vector().entries()) v[k]! += 0.2 * x
      return normalized(v)
    }
    const vectors = Array.from({ length: 80 }, (_, i) => (i % 2 === 0 ? nearSocial(i) : vector()))
    const texts = vectors.map((_, i) => `message ${i}, clause ${i}a, clause ${i}b`)
    const clauses = new Map<string, Float32Array>()
    const embed = async (t: readonly string[]) =>
      t.map(
        (x) => clauses.get(x) ?? clauses.set(x, x.endsWith('a') ? nearSocial(x.length) : vector()).get(x)!,
      )
    const placed = await requestEmbeddings(texts, vectors, wide, embed)
    let [requests, byClause] = [0, 0]
    for (const [i, p] of placed.entries()) {
      if (socialMargin(vectors[i]!, wide) < SOCIAL_MARGIN) {
        requests++
        expect(p!.margin).toBe(socialMargin(vectors[i]!, anyKind))
        continue
      }
      const asking = clausesOf(texts[i]!)
        .map((c) => clauses.get(c)!)
        .filter((v) => socialMargin(v, wide) < SOCIAL_MARGIN)
      if (asking.length === 0) expect(p).toBeUndefined()
      else {
        byClause++
        expect(p!.margin).toBe(Math.min(...asking.map((v) => socialMargin(v, anyKind))))
      }
    }
    expect(requests).toBeGreaterThan(20)
    expect(byClause).toBeGreaterThan(20)
  })
  it('reads the support requests first among the requests of every kind, as the analyzer slices them', () => {
    expect(REPLY_REQUEST_ANCHORS.slice(0, REQUEST_ANCHORS.length)).toEqual(REQUEST_ANCHORS)
  })
  it('takes a text whose every word holds a digit for data, and a text with one word without a digit for words', () => {
    for (const text of ['CB-7781', 'LS6 2QT', '201K', 'PX44019283GB', '12/03 14:30', ' HC30417. ', '£49.99'])
      expect(isDatum(text), text).toBe(true)
    for (const text of ['fridge freezer FF550X', 'status of WR-4410?', 'order 7781', 'linux', '', '??'])
      expect(isDatum(text), text).toBe(false)
  })
  it('places no data, whole or as the asking clause of a social message', async () => {
    // Regression (rules-v8): identifiers read as near neither anchors, so as requests, and made a topic.
    const vectors: Record<string, Float32Array> = {
      'CB-7781': unit(0, 0, 0, 1),
      'thanks, HM-2231': unit(1, 0, 0, 0),
      thanks: SOCIAL,
      'HM-2231': unit(0, 0, 0, 1),
      'where is WR-4410': REQUEST,
    }
    const texts = ['CB-7781', 'thanks, HM-2231', 'where is WR-4410']
    const placed = await requestEmbeddings(
      texts,
      texts.map((t) => vectors[t]!),
      { ...anchors, otherRequest: [] },
      async (t) => t.map((x) => vectors[x]!),
    )
    expect(placed[0]).toBeUndefined()
    expect(placed[1]).toBeUndefined()
    expect(placed[2]!.embedding).toBe(REQUEST)
  })
  it('takes a clause to ask nothing when the model reads it as social, or it is data, an own plan or a formula', () => {
    const asking = 'where is my parcel'
    const none = new Set<string>()
    expect(clauseAsksNothing(asking, SOCIAL_MARGIN - 0.01, none, isSocialFormula)).toBe(false)
    // Each reading alone is enough: the model's margin, the words' shape, the end user's plan, the grammar.
    expect(clauseAsksNothing(asking, SOCIAL_MARGIN, none, isSocialFormula)).toBe(true)
    expect(clauseAsksNothing('CB-7781', -1, none, isSocialFormula)).toBe(true)
    expect(clauseAsksNothing("I'll call", -1, new Set(["I'll call"]), isSocialFormula)).toBe(true)
    expect(clauseAsksNothing('muchas gracias', -1, none, isSocialFormula)).toBe(true)
    expect(clauseAsksNothing('muchas gracias', -1, none, () => false)).toBe(false)
    // The plans are the clauses of the text read: a plan of another text's is no plan of this one's.
    expect(clauseAsksNothing(asking, -1, new Set(["I'll call"]), isSocialFormula)).toBe(false)
  })

  it('reads no clause after the first that asks under the bound, and decides as when reading them all', async () => {
    // perf6: every clause of a later request was embedded, a tenth of the model's texts on multi-turn traffic.
    const vectors: Record<string, Float32Array> = {
      'where is my parcel': REQUEST,
      'and my invoice': unit(0.2, 1, 0, 0),
      thanks: SOCIAL,
      done: SOCIAL,
      'the light is blue now': unit(1, 0, 0.5, 0),
      'CB-7781': unit(0, 0, 0, 1),
      'tell me a joke': unit(0, 0, 0, 1),
    }
    const texts = [
      'where is my parcel, and my invoice, thanks',
      'done, the light is blue now. thanks!',
      'thanks. CB-7781 - where is my parcel',
      'tell me a joke',
    ]
    const gate = { ...anchors, otherRequest: [unit(0, 0, 0, 1)] }
    const read = async (below?: number) => {
      const asked: string[] = []
      const values = await clauseAsks(
        texts,
        gate,
        async (t) => {
          asked.push(...t)
          return t.map((x) => vectors[x]!)
        },
        below,
      )
      return { values, asked }
    }
    const all = await read()
    const bounded = await read(FOLLOW_UP_MARGIN)
    expect(all.asked).toHaveLength(9)
    // The first text stops at its first clause, the third at its third; the second asks in none: all read.
    expect(bounded.asked.sort()).toEqual(
      [
        'where is my parcel',
        'done',
        'the light is blue now',
        'thanks',
        'thanks',
        'CB-7781',
        'where is my parcel',
      ].sort(),
    )
    expect(all.values[3]).toBeUndefined()
    expect(bounded.values[3]).toBeUndefined()
    for (const [i, value] of all.values.entries()) {
      if (value === undefined) continue
      expect(bounded.values[i]! < FOLLOW_UP_MARGIN, texts[i]).toBe(value < FOLLOW_UP_MARGIN)
    }
    expect(all.values[1]).toBe(Infinity)
    expect(bounded.values[1]).toBe(Infinity)
  })

  it("makes a topic of a conversation's first request, and of a later one only when it clearly asks", () => {
    const clear = FOLLOW_UP_MARGIN - 0.3
    const doubtful = FOLLOW_UP_MARGIN + 0.01
    // "my card hasn't arrived", bot, "right, I have reordered it", bot, "thanks. and can they see my analytics?"
    expect(
      requestsMakingTopics([
        { margin: doubtful },
        { margin: undefined },
        { margin: doubtful },
        { margin: undefined },
        { margin: clear },
      ]),
    ).toEqual([true, false, false, false, true])
    // A greeting first: the request after it is the first, however doubtful.
    expect(requestsMakingTopics([{ margin: undefined }, { margin: doubtful }])).toEqual([false, true])
    expect(requestsMakingTopics([{ margin: FOLLOW_UP_MARGIN }, { margin: FOLLOW_UP_MARGIN }])).toEqual([
      true,
      false,
    ])
  })

  it('reads where each conversation of a batch starts, and whether a request of it came in an earlier capture', () => {
    const doubtful = FOLLOW_UP_MARGIN + 0.05
    expect(
      requestsMakingTopics([
        // A job of a conversation whose request is stored: its first message is a follow-up.
        { margin: doubtful, requestedBefore: true },
        { margin: doubtful },
        // The next job, another conversation with none before: its first request makes a topic.
        { margin: undefined, requestedBefore: false },
        { margin: doubtful },
        { margin: doubtful },
      ]),
    ).toEqual([false, false, false, true, false])
  })
})
