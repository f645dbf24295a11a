import type { AnalysisContext } from './analyzer.ts'

/** One of the chatbot's own topic labels (settings.topics) and the whole-word patterns of its keywords. */
export interface TopicMatcher {
  /** Trimmed, inner whitespace collapsed, lower case. */
  readonly label: string
  readonly keywords: readonly string[]
  /** One per keyword, global (`matchAll` counts hits; use `search` to test, which ignores lastIndex). */
  readonly patterns: readonly RegExp[]
}

const compiled = new WeakMap<object, TopicMatcher[]>()

/**
 * The matchers of a chatbot's topic list, shared by every provider: a message mentioning a keyword
 * (case-insensitive, whole word: no Unicode letter or digit right before or after; a space in a keyword
 * matches any whitespace) gets the label. Labels equal once normalized are merged; labels without
 * keywords are dropped. Compiled once per settings object.
 */
export function topicMatchers(topics: AnalysisContext['topics']): TopicMatcher[] {
  if (!topics) return []
  let matchers = compiled.get(topics)
  if (!matchers) {
    const byLabel = new Map<string, Set<string>>()
    for (const [rawLabel, rawKeywords] of Object.entries(topics)) {
      const label = normalizeSpaces(rawLabel).toLowerCase()
      if (label === '' || !Array.isArray(rawKeywords)) continue
      const keywords = byLabel.get(label) ?? new Set<string>()
      for (const k of rawKeywords) {
        if (typeof k !== 'string') continue
        const keyword = normalizeSpaces(k).toLowerCase()
        if (keyword !== '') keywords.add(keyword)
      }
      byLabel.set(label, keywords)
    }
    matchers = []
    for (const [label, keywordSet] of byLabel) {
      if (keywordSet.size === 0) continue
      const keywords = [...keywordSet]
      const patterns = keywords.map(
        (k) =>
          new RegExp(
            `(?<![\\p{L}\\p{N}])${k.split(' ').map(escapeRegExp).join('\\s+')}(?![\\p{L}\\p{N}])`,
            'giu',
          ),
      )
      matchers.push({ label, keywords, patterns })
    }
    compiled.set(topics, matchers)
  }
  return matchers
}

/** How often a matcher's keywords occur in the text, and where the first occurrence starts. */
export function keywordHits(text: string, matcher: TopicMatcher): { hits: number; first: number } {
  let hits = 0
  let first = Number.POSITIVE_INFINITY
  for (const pattern of matcher.patterns) {
    for (const match of text.matchAll(pattern)) {
      hits++
      first = Math.min(first, match.index)
    }
  }
  return { hits, first }
}

function normalizeSpaces(s: string): string {
  return s.trim().replace(/\s+/g, ' ')
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
