import { type FormEvent, useEffect, useState } from 'react'
import type { Chatbot } from '../api/types.ts'
import { type AnalyticsSelection, intervalsFor, PRESETS, selectionProblem } from '../lib/analytics-range.ts'
import { ErrorAlert } from './alert.tsx'

const INTERVAL_NAMES = { hour: 'Hour', day: 'Day', week: 'Week' } as const

/**
 * What the analytics pages analyse: a chatbot (or all), a range and the trend's bucket size. The
 * choices apply on "Show" (`onApply` gets a valid selection), so each page keeps them in its URL.
 */
export function RangeForm({
  selection,
  chatbots,
  onApply,
  idPrefix,
}: {
  selection: AnalyticsSelection
  /**
   * null for a role that may not read chatbots (viewers): no chatbot choice, the whole organization,
   * unless the selection (from a link) names one, which the form then says, with a way back to all.
   */
  chatbots: readonly Chatbot[] | null
  onApply: (selection: AnalyticsSelection) => void
  /** Makes the fields' ids unique on the page. */
  idPrefix: string
}) {
  const [draft, setDraft] = useState(selection)
  const [problem, setProblem] = useState<string>()
  useEffect(() => setDraft(selection), [selection])
  const id = (name: string) => `${idPrefix}-${name}`

  const apply = (event: FormEvent) => {
    event.preventDefault()
    const found = selectionProblem(draft)
    setProblem(found)
    if (found) return
    const interval = intervalsFor(draft).includes(draft.interval) ? draft.interval : 'day'
    onApply({ ...draft, interval })
  }

  return (
    <form onSubmit={apply} className="card filters" aria-label="Choose what to analyse">
      <div className="filter-grid">
        {chatbots ? (
          <div className="field">
            <label htmlFor={id('chatbot')}>Chatbot</label>
            <select
              id={id('chatbot')}
              value={draft.chatbotId}
              onChange={(e) => setDraft({ ...draft, chatbotId: e.target.value })}
            >
              <option value="">All chatbots</option>
              {chatbots.map((b) => (
                <option key={b.id} value={b.id}>
                  {b.name}
                </option>
              ))}
            </select>
          </div>
        ) : selection.chatbotId ? (
          // A viewer may not list the chatbots, but a link (a topic, a conversation's) can still name one:
          // say that the figures are one chatbot's, and how to see the whole organization's.
          <fieldset className="field bare">
            <legend>Chatbot</legend>
            <p className="muted field-line">One chatbot only, from the link you followed.</p>
            <button
              type="button"
              className="button subtle"
              onClick={() => onApply({ ...selection, chatbotId: '' })}
            >
              Show all chatbots
            </button>
          </fieldset>
        ) : null}
        <div className="field">
          <label htmlFor={id('range')}>Range</label>
          <select
            id={id('range')}
            value={draft.range}
            onChange={(e) => setDraft({ ...draft, range: e.target.value })}
          >
            {PRESETS.map((p) => (
              <option key={p.days} value={String(p.days)}>
                {p.label}
              </option>
            ))}
            <option value="custom">Custom days…</option>
          </select>
        </div>
        {draft.range === 'custom' ? (
          <>
            <div className="field">
              <label htmlFor={id('from')}>First day</label>
              <input
                id={id('from')}
                type="date"
                value={draft.from}
                onChange={(e) => setDraft({ ...draft, from: e.target.value })}
              />
            </div>
            <div className="field">
              <label htmlFor={id('to')}>Last day</label>
              <input
                id={id('to')}
                type="date"
                value={draft.to}
                onChange={(e) => setDraft({ ...draft, to: e.target.value })}
              />
            </div>
          </>
        ) : null}
        <div className="field">
          <label htmlFor={id('interval')}>Trend by</label>
          <select
            id={id('interval')}
            value={draft.interval}
            onChange={(e) =>
              setDraft({ ...draft, interval: e.target.value as AnalyticsSelection['interval'] })
            }
          >
            {(draft.range === 'custom' && (!draft.from || !draft.to)
              ? (['day', 'week'] as const)
              : intervalsFor(draft)
            ).map((i) => (
              <option key={i} value={i}>
                {INTERVAL_NAMES[i]}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ErrorAlert error={problem} />
      <div className="actions">
        <button type="submit" className="button primary">
          Show
        </button>
      </div>
    </form>
  )
}
