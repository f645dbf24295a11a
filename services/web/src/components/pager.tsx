/**
 * Newer / Page N / Older over an API's opaque cursors: `cursors` are those of the pages up to the
 * current one (the first page's is undefined), `nextCursor` the current page's answer. The buttons are
 * aria-disabled, not disabled: a disabled button loses the focus, and Older was disabled while the next page
 * loaded, so a keyboard user's focus fell to the page's start at every page (trial12). The page number is a
 * polite live region: a screen reader hears which page came.
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
        aria-disabled={cursors.length <= 1 || undefined}
        onClick={() => {
          if (cursors.length > 1) onChange((cs) => cs.slice(0, -1))
        }}
      >
        Newer
      </button>
      <span aria-live="polite">Page {cursors.length}</span>
      <button
        type="button"
        className="button secondary"
        aria-disabled={!nextCursor || undefined}
        onClick={() => {
          if (nextCursor) onChange((cs) => [...cs, nextCursor])
        }}
      >
        Older
      </button>
    </nav>
  )
}
