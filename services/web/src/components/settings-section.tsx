import { type FormEvent, useState } from 'react'
import { chatbots } from '../api/endpoints.ts'
import type { Chatbot, CustomFieldType } from '../api/types.ts'
import { useSession } from '../lib/session.tsx'
import {
  CUSTOM_FIELD_TYPES,
  MAX_RETENTION_DAYS,
  type SettingsForm,
  settingsPatch,
  settingsProblems,
  settingsToForm,
} from '../lib/settings-form.ts'
import { ErrorAlert, ProblemList } from './alert.tsx'

/**
 * Analysis on/off, retention, the custom-field schema and the chatbot's topics, saved as one merge patch.
 * Analysis and retention (which stop or erase data) and the topics are owners' and admins' (the server
 * refuses a member them too): a member sees the first two read-only and not the topics.
 */
export function SettingsSection({ chatbot, onSaved }: { chatbot: Chatbot; onSaved: (c: Chatbot) => void }) {
  const { can } = useSession()
  const [form, setForm] = useState<SettingsForm>(() => settingsToForm(chatbot.settings))
  const [problems, setProblems] = useState<string[]>([])
  const [error, setError] = useState<unknown>()
  const [saved, setSaved] = useState(false)
  const [busy, setBusy] = useState(false)

  const edit = (change: Partial<SettingsForm>) => {
    setForm((f) => ({ ...f, ...change }))
    setSaved(false)
  }
  const patch = settingsPatch(chatbot.settings, form)

  const save = async (event: FormEvent) => {
    event.preventDefault()
    const found = settingsProblems(form)
    setProblems(found)
    setError(undefined)
    if (found.length > 0 || !patch) return
    setBusy(true)
    try {
      const updated = await chatbots.update(chatbot.id, { settings: patch })
      onSaved(updated)
      setForm(settingsToForm(updated.settings))
      setSaved(true)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  return (
    <section className="card" aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <form onSubmit={save} className="stack" noValidate>
        {can('chatbots:govern') ? (
          <>
            <div className="check">
              <input
                id="analysis-enabled"
                type="checkbox"
                checked={form.analysisEnabled}
                onChange={(e) => edit({ analysisEnabled: e.target.checked })}
                aria-describedby="analysis-hint"
              />
              <label htmlFor="analysis-enabled">Analyse new messages (sentiment and topics)</label>
            </div>
            <p id="analysis-hint" className="hint">
              When off, conversations are still stored but no longer scored.
            </p>

            <div className="field narrow">
              <label htmlFor="retention-days">Keep conversations for (days)</label>
              <input
                id="retention-days"
                type="number"
                inputMode="numeric"
                min={1}
                max={MAX_RETENTION_DAYS}
                value={form.retentionDays}
                onChange={(e) => edit({ retentionDays: e.target.value })}
                aria-describedby="retention-hint"
              />
              <p id="retention-hint" className="hint">
                Older conversations are erased automatically. Leave empty to keep them forever.
              </p>
            </div>
          </>
        ) : (
          <div>
            <dl className="pairs">
              <div>
                <dt>Analysis of new messages</dt>
                <dd>{form.analysisEnabled ? 'On' : 'Off'}</dd>
              </div>
              <div>
                <dt>Conversations kept</dt>
                <dd>{form.retentionDays ? `${form.retentionDays} days` : 'Forever'}</dd>
              </div>
            </dl>
            <p className="hint">Owners and admins change analysis and retention.</p>
          </div>
        )}

        <fieldset>
          <legend>Custom fields</legend>
          <p className="hint">
            The <code>custom</code> values your chatbot sends with a capture are checked against these; others
            are stored with a warning.
          </p>
          {form.customFields.map((field, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their position while edited.
            <div className="row-fields" key={i}>
              <div className="field grow">
                <label htmlFor={`field-name-${i}`}>Field {i + 1} name</label>
                <input
                  id={`field-name-${i}`}
                  value={field.name}
                  maxLength={100}
                  onChange={(e) =>
                    edit({
                      customFields: form.customFields.map((f, j) =>
                        j === i ? { ...f, name: e.target.value } : f,
                      ),
                    })
                  }
                />
              </div>
              <div className="field">
                <label htmlFor={`field-type-${i}`}>Field {i + 1} type</label>
                <select
                  id={`field-type-${i}`}
                  value={field.type}
                  onChange={(e) =>
                    edit({
                      customFields: form.customFields.map((f, j) =>
                        j === i ? { ...f, type: e.target.value as CustomFieldType } : f,
                      ),
                    })
                  }
                >
                  {CUSTOM_FIELD_TYPES.map((t) => (
                    <option key={t} value={t}>
                      {t}
                    </option>
                  ))}
                </select>
              </div>
              <button
                type="button"
                className="button subtle"
                aria-label={`Remove field ${field.name || i + 1}`}
                onClick={() => edit({ customFields: form.customFields.filter((_, j) => j !== i) })}
              >
                Remove
              </button>
            </div>
          ))}
          <button
            type="button"
            className="button secondary"
            onClick={() => edit({ customFields: [...form.customFields, { name: '', type: 'string' }] })}
          >
            Add custom field
          </button>
        </fieldset>

        {can('topics:manage') ? (
          <fieldset>
            <legend>Topics</legend>
            <p className="hint">
              A message that mentions one of a topic's keywords gets that topic, on top of the key phrases
              found automatically. Separate keywords with commas.
            </p>
            {form.topics.map((topic, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their position while edited.
              <div className="row-fields" key={i}>
                <div className="field">
                  <label htmlFor={`topic-label-${i}`}>Topic {i + 1} label</label>
                  <input
                    id={`topic-label-${i}`}
                    value={topic.label}
                    maxLength={100}
                    onChange={(e) =>
                      edit({
                        topics: form.topics.map((t, j) => (j === i ? { ...t, label: e.target.value } : t)),
                      })
                    }
                  />
                </div>
                <div className="field grow">
                  <label htmlFor={`topic-keywords-${i}`}>Topic {i + 1} keywords</label>
                  <input
                    id={`topic-keywords-${i}`}
                    value={topic.keywords}
                    onChange={(e) =>
                      edit({
                        topics: form.topics.map((t, j) => (j === i ? { ...t, keywords: e.target.value } : t)),
                      })
                    }
                  />
                </div>
                <button
                  type="button"
                  className="button subtle"
                  aria-label={`Remove topic ${topic.label || i + 1}`}
                  onClick={() => edit({ topics: form.topics.filter((_, j) => j !== i) })}
                >
                  Remove
                </button>
              </div>
            ))}
            <button
              type="button"
              className="button secondary"
              onClick={() => edit({ topics: [...form.topics, { label: '', keywords: '' }] })}
            >
              Add topic
            </button>
          </fieldset>
        ) : null}

        <ProblemList problems={problems} />
        <ErrorAlert error={error} prefix="The settings were not saved." />
        <div className="actions">
          <button type="submit" className="button primary" disabled={busy || !patch}>
            {busy ? 'Saving…' : 'Save settings'}
          </button>
          <span role="status" className="success-text">
            {saved ? 'Settings saved.' : ''}
          </span>
        </div>
      </form>
    </section>
  )
}
