import { useId, useMemo, useRef, useState } from 'react'
import { type CutLimits, cutText } from '../lib/cut-text.ts'
import { formatNumber } from '../lib/format.ts'

/**
 * A value that may be long (a metadata value, a message's content), placed inside the element that
 * shows it: its start within `limits` and, when that is not all of it, a "Show all (N characters)"
 * button (aria-expanded, aria-controls) that shows the rest, then "Show less". The element styles it
 * (.message-content keeps line breaks) and wraps a long word anywhere (overflow-wrap), as .expandable
 * does, so that nothing widens the page.
 */
export function ExpandableText({ text, limits }: { text: string; limits: CutLimits }) {
  const cut = useMemo(() => cutText(text, limits), [text, limits])
  const [expanded, setExpanded] = useState(false)
  const id = useId()
  const button = useRef<HTMLButtonElement>(null)
  // The usual short value: as it is, nothing added to the element around it.
  if (!cut.cut) return text
  const toggle = () => {
    setExpanded(!expanded)
    // Shown less, the button moves up by the length of the rest: keep it (and the reader) in view.
    if (expanded) requestAnimationFrame(() => button.current?.scrollIntoView({ block: 'nearest' }))
  }
  return (
    <>
      <span className="expandable" id={id}>
        {expanded ? text : `${cut.shown}…`}
      </span>{' '}
      <button
        ref={button}
        type="button"
        className="text-toggle"
        aria-expanded={expanded}
        aria-controls={id}
        onClick={toggle}
      >
        {expanded ? 'Show less' : `Show all (${formatNumber(cut.characters)} characters)`}
      </button>
    </>
  )
}
