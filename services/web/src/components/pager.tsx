/**
 * Newer / Page N / Older over an API's opaque cursors: `cursors` are those of the pages up to the
 * current one (the first page's is undefined), `nextCursor` the current page's answer.
 */
export function CursorPager({
  label,
  cursors,
  nextCursor,
  onChange,
}: {
  label: string
  cursors: readonly (string | undefined)[]
  nextCursor: string | null | undefined
  onChange: (change: (cursors: (string | undefined)[]) => (string | undefined)[]) => void
}) {
  return (
    <nav className="pager" aria-label={label}>
      <button
        type="button"
        className="button secondary"
        disabled={cursors.length <= 1}
        onClick={() => onChange((cs) => cs.slice(0, -1))}
      >
        Newer
      </button>
      <span>Page {cursors.length}</span>
      <button
        type="button"
        className="button secondary"
        disabled={!nextCursor}
        onClick={() => onChange((cs) => [...cs, nextCursor ?? undefined])}
      >
        Older
      </button>
    </nav>
  )
}
