import { CopyButton } from './copy-button.tsx'

/** A block of code to paste elsewhere: scrollable (and so focusable) on narrow screens, with a copy button. */
export function CodeBlock({ code, label }: { code: string; label: string }) {
  return (
    <div className="code-block">
      <div className="code-block-bar">
        <span>{label}</span>
        <CopyButton text={code} label={`Copy ${label}`} />
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard. */}
      <pre tabIndex={0}>
        <code>{code}</code>
      </pre>
    </div>
  )
}
