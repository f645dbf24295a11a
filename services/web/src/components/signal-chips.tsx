import type { ConversationSignal } from '../api/types.ts'
import { refinedByText, signalName } from '../lib/signals.ts'

/**
 * A conversation's signals as chips ("Bot failure", "Escalation", a custom signal's label); one an LLM
 * confirmed says so ("Bot failure · refined by gpt-4o-mini").
 */
export function SignalChips({ signals }: { signals: readonly ConversationSignal[] }) {
  if (signals.length === 0) return null
  return (
    <ul className="chips signal-chips" aria-label="Signals">
      {signals.map((s) => {
        const refined = refinedByText(s)
        return (
          <li key={s.name}>
            <span className={`chip signal-chip signal-${s.name.startsWith('custom:') ? 'custom' : s.name}`}>
              {signalName(s)}
              {refined ? <span className="chip-note"> · {refined}</span> : null}
            </span>
          </li>
        )
      })}
    </ul>
  )
}
