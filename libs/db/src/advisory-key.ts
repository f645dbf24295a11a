/**
 * A stable non-negative int4 naming `text`, for the first key of a two-key advisory lock (FNV-1a of its
 * UTF-8 bytes). Each user names its locks with a prefix of its own, so that they never meet.
 */
export function advisoryLockKey(text: string): number {
  let h = 0x811c9dc5
  for (const ch of Buffer.from(text)) h = Math.imul(h ^ ch, 0x01000193)
  return (h >>> 0) & 0x7fffffff
}
