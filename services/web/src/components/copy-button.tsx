import { useEffect, useState } from 'react'

/** Copies `text` to the clipboard and says so (to screen readers too). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle')
  useEffect(() => {
    if (state === 'idle') return
    const timer = setTimeout(() => setState('idle'), 2_500)
    return () => clearTimeout(timer)
  }, [state])
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setState('copied')
    } catch {
      setState('failed')
    }
  }
  return (
    <span className="copy">
      <button type="button" className="button secondary" onClick={copy}>
        {label}
      </button>
      <span role="status" className="copy-status">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text instead' : ''}
      </span>
    </span>
  )
}
