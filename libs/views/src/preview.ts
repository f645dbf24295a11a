/**
 * A conversation's preview (rm_conversations.preview, the conversation list's `preview`): its first
 * end-user message, by sentAt then arrival, of those with more than whitespace, as one line (runs of
 * whitespace, line breaks included, made one space) of at most PREVIEW_CHARS characters, an ellipsis
 * ending one that was cut. Characters are code points: a cut never splits a surrogate pair.
 * Migration 0027's backfill applies the same rule in SQL; Needs attention cuts its examples' messages in
 * their topic with it too (services/query/src/repositories/signals.ts).
 */
export const PREVIEW_CHARS = 160

/** The preview of a message's content; undefined for content of whitespace only. */
export function previewOf(content: string): string | undefined {
  // The usual message is short: no work beyond one pass over it.
  const line = content.replace(/\s+/gu, ' ').trim()
  if (line === '') return undefined
  if (line.length <= PREVIEW_CHARS) return line
  let end = 0
  for (let n = 0; n < PREVIEW_CHARS - 1; n++) {
    const code = line.charCodeAt(end)
    end += code >= 0xd800 && code <= 0xdbff && end + 1 < line.length ? 2 : 1
  }
  if (end >= line.length) return line
  // Beyond PREVIEW_CHARS - 1 code points there is more than one left: cut, or keep it whole when it is
  // exactly one more.
  const next = line.codePointAt(end)!
  if (end + (next > 0xffff ? 2 : 1) >= line.length) return line
  return `${line.slice(0, end).trimEnd()}…`
}
