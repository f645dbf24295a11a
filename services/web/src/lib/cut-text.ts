/**
 * Cutting long values for display (issue 30: a 1 MB `user.name` made a conversation page 800,000 px
 * tall). Capture now refuses metadata strings over 1,024 characters, but older data and message contents
 * (up to 32,768) can still be long: the dashboard shows the start of such a value and a toggle to show
 * it all (components/expandable-text.tsx).
 *
 * Characters are code points, as the conversation list's preview counts them
 * (libs/views/src/preview.ts): a cut never splits a surrogate pair, and where the
 * runtime has Intl.Segmenter it never splits a grapheme either (an emoji with its skin tone, a flag, a
 * letter with its combining accents).
 */

export interface CutLimits {
  /** The most characters shown before the toggle. */
  readonly maxChars: number
  /** The most lines shown, for text shown with its line breaks (a message's). */
  readonly maxLines?: number
}

export interface CutText {
  /** What is shown while cut: the start of the text (its end trimmed of whitespace), or all of it. */
  readonly shown: string
  /** Whether `shown` is only the start of the text. */
  readonly cut: boolean
  /** The whole text's length in characters (code points), for "Show all (N characters)". */
  readonly characters: number
}

/** A metadata value (user, organization, session and custom fields): a label, shown on a few lines. */
export const METADATA_LIMITS: CutLimits = { maxChars: 200 }

/** A message's content: a couple of screens on a phone at most. */
export const MESSAGE_LIMITS: CutLimits = { maxChars: 2_000, maxLines: 30 }

/** A cut made on a word boundary if one is this close to the limit (a share of maxChars). */
const WORD_BOUNDARY_REACH = 0.2

/** The number of code points in `text` (a surrogate pair is one; a lone surrogate is one too). */
export function countCharacters(text: string): number {
  let n = text.length
  for (let i = 0; i < text.length - 1; i++) {
    const code = text.charCodeAt(i)
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        n--
        i++
      }
    }
  }
  return n
}

/**
 * The start of `text` within `limits`, or all of it when it fits. A cut text ends on a grapheme
 * boundary, on a word boundary when one is near the limit, and never in whitespace.
 */
export function cutText(text: string, limits: CutLimits): CutText {
  const { maxChars, maxLines } = limits
  // The usual value is short: nothing to count beyond its length (a code point is 1 or 2 code units).
  if (text.length <= maxChars && (maxLines === undefined || !text.includes('\n')))
    return { shown: text, cut: false, characters: countCharacters(text) }
  const characters = countCharacters(text)

  // The code unit index after maxChars code points (text.length if the text has no more).
  let end = 0
  for (let n = 0; n < maxChars && end < text.length; n++) end += codeUnitsAt(text, end)
  // A line limit that comes first wins.
  let byLines = false
  if (maxLines !== undefined) {
    let breaks = 0
    for (let i = text.indexOf('\n'); i !== -1 && i < end; i = text.indexOf('\n', i + 1)) {
      if (++breaks === maxLines) {
        end = i
        byLines = true
        break
      }
    }
  }
  if (end >= text.length || text.slice(end).trim() === '') return { shown: text, cut: false, characters }

  const hardEnd = end
  if (!byLines) end = wordBoundaryBefore(text, end, Math.floor(maxChars * WORD_BOUNDARY_REACH))
  end = graphemeBoundaryAtOrBefore(text, end)
  const shown = text.slice(0, end).trimEnd()
  if (shown !== '') return { shown, cut: true, characters }
  // Nothing but whitespace before the cut: the start of what follows it, the whitespace left out.
  const trimmed = text.trimStart()
  if (trimmed !== text) {
    const rest = cutText(trimmed, limits)
    return rest.cut ? { shown: rest.shown, cut: true, characters } : { shown: text, cut: false, characters }
  }
  // One grapheme longer than the limit (a letter under hundreds of accents): cut it by code points.
  return { shown: text.slice(0, hardEnd), cut: true, characters }
}

/** 2 where a surrogate pair starts at `i`, else 1. */
function codeUnitsAt(text: string, i: number): number {
  const code = text.charCodeAt(i)
  if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
    const next = text.charCodeAt(i + 1)
    if (next >= 0xdc00 && next <= 0xdfff) return 2
  }
  return 1
}

/** The start of the last run of whitespace within `reach` code units before `end`, or `end`. */
function wordBoundaryBefore(text: string, end: number, reach: number): number {
  if (/\s/u.test(text[end] ?? '')) return end
  for (let i = end - 1; i > 0 && i >= end - reach; i--) {
    if (/\s/u.test(text[i]!)) {
      while (i > 0 && /\s/u.test(text[i - 1]!)) i--
      return i
    }
  }
  return end
}

const graphemes =
  typeof Intl !== 'undefined' && 'Segmenter' in Intl
    ? new Intl.Segmenter(undefined, { granularity: 'grapheme' })
    : undefined

/**
 * `end`, or the start of the grapheme that `end` falls inside. Whether a grapheme boundary lies at an
 * index depends only on what comes before it and the character at it, so only the text up to that
 * character is segmented (V8's segment iterator is slow on long strings; `containing` is not).
 */
function graphemeBoundaryAtOrBefore(text: string, end: number): number {
  if (end <= 0 || end >= text.length) return end
  // Never between the two halves of a surrogate pair, with or without Intl.Segmenter.
  const code = text.charCodeAt(end)
  if (code >= 0xdc00 && code <= 0xdfff && isHighSurrogate(text.charCodeAt(end - 1))) end--
  if (!graphemes) return end
  const upTo = end + codeUnitsAt(text, end)
  return graphemes.segment(text.slice(0, upTo)).containing(end)?.index ?? end
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

/** The start of `text` within `maxChars` with an ellipsis, or all of it: where a page links to the rest. */
export function shortText(text: string, maxChars: number): string {
  const cut = cutText(text, { maxChars })
  return cut.cut ? `${cut.shown}…` : text
}
