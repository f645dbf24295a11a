import { describe, expect, it } from 'vitest'
import { termCorpus } from './labels.ts'
import {
  clusterCentroids,
  groupThemes,
  MAX_THEME_CONVERSATION_SHARE,
  MAX_THEME_TOPIC_SHARE,
  MAX_THEMES,
  type ThemeTopic,
  themeCounts,
  themeCuts,
} from './themes.ts'
import { normalized } from './vectors.ts'

const DIMENSIONS = 16

/** A unit vector near axis `axis`, nudged along `nudge` so that no two topics coincide. */
function near(axis: number, nudge: number, amount = 0.3): Float32Array {
  const v = new Float32Array(DIMENSIONS)
  v[axis] = 1
  v[(nudge % (DIMENSIONS - 8)) + 8] = amount
  return normalized(v)
}

let n = 0
function topic(label: string, centroid: Float32Array, size = 10): ThemeTopic {
  const words = label.split(/[\s,]+/)
  const terms = new Map<string, number>(words.map((w) => [w, size]))
  n++
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    label,
    keywords: words,
    terms,
    centroid,
    size,
  }
}

const cards = [
  topic('card delivery', near(0, 0), 30),
  topic('card activate', near(0, 1), 20),
  topic('lost card', near(0, 2), 10),
]
const transfers = [
  topic('transfer fee', near(1, 3), 25),
  topic('pending transfer', near(1, 4), 15),
  topic('transfer failed', near(1, 5), 5),
]
const passwords = [
  topic('reset password', near(2, 6), 12),
  topic('password change', near(2, 7), 8),
  topic('forgot password', near(2, 0), 4),
]
const all = [...cards, ...transfers, ...passwords]
const ids = (list: readonly ThemeTopic[]) => list.map((t) => t.id).sort()

describe('groupThemes', () => {
  it('groups topics whose centroids lie together, and labels each group by the word its topics share', () => {
    const themes = groupThemes(all)
    expect(themes.map((t) => [...t.topicIds].sort())).toEqual([ids(cards), ids(transfers), ids(passwords)])
    expect(themes.map((t) => t.label)).toEqual(['Card', 'Transfer', 'Password'])
    // Largest topic first within a theme; largest theme first.
    expect(themes[0]!.topicIds[0]).toBe(cards[0]!.id)
  })

  it('chooses how many themes from the data: two groups make two themes', () => {
    const themes = groupThemes([...cards, ...transfers])
    expect(themes.map((t) => [...t.topicIds].sort())).toEqual([ids(cards), ids(transfers)])
  })

  it('is the same whatever the order of the topics', () => {
    expect(groupThemes([...all].reverse())).toEqual(groupThemes(all))
  })

  it('makes no themes of fewer than four topics, nor of none', () => {
    expect(groupThemes(cards)).toEqual([])
    expect(groupThemes([])).toEqual([])
  })

  it('makes no themes when every cut leaves one theme with more than half of the topics', () => {
    // Issue 31, item 3: a small chatbot's topics cut into a theme of nearly all of them beside an outlier.
    const lopsided = [...cards, topic('card fee', near(0, 3)), topic('weather', near(5, 4))]
    expect(themeCounts(lopsided.length)).toEqual([2])
    expect(new Set(clusterCentroids(lopsided.map((t) => t.centroid))).size).toBe(2)
    expect(groupThemes(lopsided)).toEqual([])
  })

  it('shows a finer cut whose themes each hold at most half of the topics over a better lopsided one', () => {
    // Two close groups of three (0.15 apart, each topic 0.05 from the next) and an outlier: the cut of
    // best silhouette is {six} against {one}, 6 of 7 topics in one theme.
    const lean = (axis: number, nudge: number) => {
      const v = new Float32Array(DIMENSIONS)
      v[0] = 1
      v[axis] = 0.15
      v[8 + nudge] = 0.05
      return normalized(v)
    }
    const left = [0, 1, 2].map((i) => topic(`left ${i}`, lean(3, i)))
    const right = [3, 4, 5].map((i) => topic(`right ${i}`, lean(4, i)))
    const outlier = topic('weather', near(6, 6))
    const topics = [...left, ...right, outlier]
    const cuts = themeCuts(topics.map((t) => t.centroid))
    expect(cuts.map((c) => c.k)).toEqual([2, 3])
    expect(cuts[0]!.score).toBeGreaterThan(cuts[1]!.score)
    const themes = groupThemes(topics)
    expect(themes.map((t) => [...t.topicIds].sort())).toEqual(
      [ids(left), ids(right), [outlier.id]].sort((a, b) => b.length - a.length || (a[0]! < b[0]! ? -1 : 1)),
    )
    for (const t of themes)
      expect(t.topicIds.length).toBeLessThanOrEqual(MAX_THEME_TOPIC_SHARE * topics.length)
  })

  it('shows a finer cut over a better one whose largest theme holds more than two thirds of the conversations', () => {
    // Issue 31, item 3 (topics19): on multi-turn windows a theme of at most half of the topics still held up to
    // 74 % of the conversations: its topics were the ones most conversations were in.
    const lean = (base: number, axis: number, nudge: number) => {
      const v = new Float32Array(DIMENSIONS)
      v[base] = 1
      v[axis] = 0.15
      v[8 + nudge] = 0.05
      return normalized(v)
    }
    const a = [0, 1].map((i) => topic(`alpha ${i}`, lean(0, 3, i)))
    const b = [2, 3].map((i) => topic(`beta ${i}`, lean(0, 4, i)))
    const c = [4, 5].map((i) => topic(`gamma ${i}`, lean(1, 5, i)))
    const d = [6, 7].map((i) => topic(`delta ${i}`, lean(1, 6, i)))
    const topics = [...a, ...b, ...c, ...d]
    const cuts = themeCuts(topics.map((t) => t.centroid))
    // The best cut is the coarsest: {alpha, beta} against {gamma, delta}, half of the topics each.
    expect(cuts[0]!.k).toBe(2)
    for (const cut of cuts.slice(1)) expect(cuts[0]!.score).toBeGreaterThan(cut.score)
    expect(groupThemes(topics)).toHaveLength(2)
    // Seven conversations of ten in alpha or beta (one of them in delta too): 7 of 10 in one theme of that cut.
    const conversations = [
      [a[0]!.id],
      [a[1]!.id],
      [a[0]!.id, a[1]!.id],
      [b[0]!.id],
      [b[1]!.id],
      [b[0]!.id],
      [a[0]!.id, d[0]!.id],
      [c[0]!.id],
      [c[1]!.id],
      [d[1]!.id],
      ['a topic since merged away or retired'],
    ]
    const themes = groupThemes(topics, [], undefined, conversations)
    expect(themes.length).toBeGreaterThan(2)
    const theme = (t: ThemeTopic) => themes.find((th) => th.topicIds.includes(t.id))!
    expect(theme(a[0]!)).not.toBe(theme(b[0]!))
    for (const th of themes) {
      const own = conversations.filter((ids) => ids.some((id) => th.topicIds.includes(id)))
      expect(own.length).toBeLessThanOrEqual(MAX_THEME_CONVERSATION_SHARE * 10)
    }
  })

  it('makes no themes when every cut leaves one theme with more than two thirds of the conversations', () => {
    const topics = [0, 1, 2, 3].map((i) => topic(`topic ${i}`, near(i < 2 ? 0 : 1, i)))
    expect(themeCounts(topics.length)).toEqual([2])
    expect(groupThemes(topics)).toHaveLength(2)
    // Every conversation but one in the first two topics' theme, one of them in the other theme too.
    const conversations = [[topics[0]!.id], [topics[1]!.id], [topics[0]!.id, topics[2]!.id], [topics[3]!.id]]
    expect(groupThemes(topics, [], undefined, conversations)).toEqual([])
  })

  it('keeps a theme id while the theme keeps most of its topics; a new theme gets a new id', () => {
    const before = groupThemes(all)
    const extra = [topic('card limit', near(0, 3), 6), topic('card declined', near(0, 4), 6)]
    const after = groupThemes([...all, ...extra], before)
    const cardTheme = after.find((t) => t.topicIds.includes(cards[0]!.id))!
    expect(cardTheme.id).toBe(before[0]!.id)
    expect(cardTheme.topicIds).toEqual(expect.arrayContaining(extra.map((t) => t.id)))
    expect(new Set(after.map((t) => t.id)).size).toBe(after.length)
    // Without the previous themes, the same grouping gets ids from its topics alone.
    const fresh = groupThemes(all)
    expect(fresh.map((t) => t.id)).toEqual(before.map((t) => t.id))
    const refreshed = groupThemes(all, [{ id: 'kept', label: 'x', topicIds: [transfers[1]!.id] }])
    expect(refreshed.find((t) => t.topicIds.includes(transfers[0]!.id))!.id).toBe('kept')
  })

  it('never gives two themes one label', () => {
    // Two groups far apart whose topics all say "card".
    const a = [
      topic('card fee', near(3, 0)),
      topic('card charge', near(3, 1)),
      topic('card cost', near(3, 2)),
    ]
    const b = [topic('card pin', near(4, 3)), topic('card code', near(4, 4)), topic('card lock', near(4, 5))]
    const themes = groupThemes([...a, ...b])
    expect(themes).toHaveLength(2)
    expect(new Set(themes.map((t) => t.label)).size).toBe(2)
    for (const t of themes) expect(t.label).toMatch(/^Card/)
  })

  it("names no theme by a word of a topic's phrase that no member used as a term of its own", () => {
    // Regression: a topic named by its members' first words ("so what do i", terms.ts's fallback for a
    // request without a content word) gave its theme their function words as candidates.
    const phrase = (label: string, centroid: Float32Array): ThemeTopic => ({
      ...topic('x', centroid),
      label,
      keywords: [label],
      terms: new Map([[label, 3]]),
    })
    const themes = groupThemes([
      phrase('so what do i', near(5, 0)),
      phrase('who are you', near(5, 1)),
      topic('pay', near(5, 2)),
      ...cards,
    ])
    // The three topics' theme; "Pay, are" before: the second word for the topics "pay" leaves out.
    expect(themes.map((t) => t.label).sort()).toEqual(['Card', 'Pay'])
  })

  it('makes at most a handful of themes however many topics', () => {
    const many = Array.from({ length: 40 }, (_, i) => topic(`word${i} thing${i}`, near(i % 8, i, 0.05 * i)))
    const themes = groupThemes(many)
    expect(themes.length).toBeGreaterThanOrEqual(2)
    expect(themes.length).toBeLessThanOrEqual(MAX_THEMES)
    expect(themes.flatMap((t) => t.topicIds).sort()).toEqual(ids(many))
  })

  it('does not leave many evenly spread topics in one theme beside a few outliers', () => {
    // Regression: the best silhouette among 2 … 12 groups was 2 here, {28 topics} against {4 outliers}, as
    // on a chatbot's multi-turn topics (one theme of 97 % of the conversations). 32 topics: from √(n/2) = 4
    // themes every cut still leaves more than half of them in one (the spread topics form no groups), so
    // none; the same topics with the outliers grouped as those are, at least 4 themes, none of 28.
    const wide = 40
    const spread = Array.from({ length: 28 }, (_, i) => {
      const v = new Float32Array(wide)
      v[0] = 1
      v[i + 1] = 0.6
      return topic(`word${i} spread`, normalized(v))
    })
    const outliers = Array.from({ length: 4 }, (_, i) => {
      const v = new Float32Array(wide)
      v[30] = 1
      v[31 + i] = 0.3
      return topic(`agent${i} human`, normalized(v))
    })
    expect(
      new Set(clusterCentroids([...spread, ...outliers].map((t) => t.centroid))).size,
    ).toBeGreaterThanOrEqual(4)
    expect(groupThemes([...spread, ...outliers])).toEqual([])
  })
})

describe('themeCounts', () => {
  it('tries from √(n/2) (at least 2) to at most MAX_THEMES or n / 2 themes; none below four topics', () => {
    expect(themeCounts(3)).toEqual([])
    expect(themeCounts(4)).toEqual([2])
    expect(themeCounts(9)).toEqual([2, 3, 4])
    expect(themeCounts(32)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12])
    expect(themeCounts(188)).toEqual([10, 11, 12])
    // From 313 topics √(n/2) rounds past MAX_THEMES: then MAX_THEMES alone.
    expect(themeCounts(242)).toEqual([11, 12])
    expect(themeCounts(1000)).toEqual([MAX_THEMES])
  })
})

/** The theme labels as they were computed before bench/FINDINGS.md "themecost": merged term maps per theme. */
function labelsByMergedDocuments(themes: readonly (readonly ThemeTopic[])[]): string[] {
  const wordsOf = (t: ThemeTopic) => {
    const words = new Set<string>()
    for (const phrase of [t.label, ...t.keywords])
      for (const w of phrase.toLowerCase().split(/[\s,]+/)) if (/\p{L}/u.test(w)) words.add(w)
    return words
  }
  const docs = themes.map((list) => {
    const counts = new Map<string, number>()
    for (const t of list)
      for (const [term, n] of t.terms) if (!term.includes(' ')) counts.set(term, (counts.get(term) ?? 0) + n)
    return counts
  })
  const corpus = termCorpus(docs)
  const taken = new Set<string>()
  const distinct = (label: string) => {
    let out = label
    for (let n = 2; taken.has(out); n++) out = `${label} (${n})`
    taken.add(out)
    return out
  }
  const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)
  return themes.map((list, i) => {
    const doc = docs[i]!
    let size = 0
    for (const n of doc.values()) size += n
    const topicWords = list.map(wordsOf)
    const score = (w: string) => {
      const n = doc.get(w) ?? 0
      const f = Math.max(corpus.frequency.get(w) ?? 0, n)
      return size === 0 || f === 0 ? 0 : (n / size) * Math.log(1 + corpus.averageTermsPerTopic / f)
    }
    const candidates = [...new Set(topicWords.flatMap((w) => [...w]))]
    const rank = (among: readonly Set<string>[]) =>
      candidates
        .map((w) => ({ w, c: among.filter((s) => s.has(w)).length, s: score(w) }))
        // Words no member used as a term (a phrase's: rules-v9) name no theme.
        .filter((x) => x.c > 0 && x.s > 0)
        .sort((a, b) => b.c * b.s - a.c * a.s || b.c - a.c || (a.w < b.w ? -1 : 1))
        .map((x) => x.w)
    const ranked = rank(topicWords)
    if (ranked.length === 0) return distinct('Topics')
    const words = [ranked[0]!]
    const left = topicWords.filter((s) => !s.has(ranked[0]!))
    if (left.length > 0) {
      const second = rank(left)[0]
      if (second !== undefined) words.push(second)
    }
    let label = capitalized(words.join(', '))
    for (const w of ranked) {
      if (!taken.has(label)) break
      if (!words.includes(w)) {
        words.push(w)
        label = capitalized(words.join(', '))
      }
    }
    return distinct(label)
  })
}

describe('theme labels', () => {
  it('are those of merged term documents per theme, on random topics with tied counts and shared words', () => {
    let seed = 11
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    }
    const words = ['card', 'transfer', 'fee', 'password', 'reset', 'lost', 'bill', 'pay', 'order', 'book']
    const pick = () => words[Math.floor(random() * words.length)]!
    for (let round = 0; round < 200; round++) {
      const topics = Array.from({ length: 1 + Math.floor(random() * 40) }, (_, i) => {
        const v = Float32Array.from({ length: DIMENSIONS }, () => Math.round(random() * 4) - 2)
        if (v.every((x) => x === 0)) v[0] = 1
        const [a, b] = [pick(), pick()]
        const terms = new Map<string, number>()
        // Bigrams too (left out of a theme's words), and some topics with no terms at all.
        if (random() > 0.1)
          for (let k = 0; k < 6; k++)
            terms.set(random() < 0.2 ? `${pick()} ${b}` : pick(), 1 + Math.floor(random() * 3))
        return {
          id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          label: `${a} ${b}`,
          keywords: [a, `${b}, ${pick()}`],
          terms,
          centroid: normalized(v),
          size: 1 + Math.floor(random() * 5),
        }
      })
      const themes = groupThemes(topics)
      const byId = new Map(topics.map((t) => [t.id, t]))
      const expected = labelsByMergedDocuments(themes.map((th) => th.topicIds.map((id) => byId.get(id)!)))
      expect(themes.map((th) => th.label)).toEqual(expected)
    }
  })
})
