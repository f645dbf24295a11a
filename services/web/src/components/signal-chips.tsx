import type { ConversationSignal } from '../api/types.ts'
import { signalName } from '../lib/signals.ts'

/** A conversation's signals as chips ("Bot failure", "Escalation", a custom signal's label). */
export function SignalChips({ signals }: { signals: readonly ConversationSignal[] }) {
  if (signals.length === 0) return null
  return (
    <ul className="chips signal-chips" aria-label="Signals">
      {signals.map((s) => (
        <li key={s.name}>
          <span className={`chip signal-chip signal-${s.name.startsWith('custom:') ? 'custom' : s.name}`}>
            {signalName(s)}
          </span>
        </li>
      ))}
    </ul>
  )
}
