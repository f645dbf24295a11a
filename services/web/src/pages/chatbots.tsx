import { analysisEnabled } from '@cas/settings/limits'
import { type FormEvent, useState } from 'react'
import { chatbots } from '../api/endpoints.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { formatDate } from '../lib/format.ts'
import { Link, useRouter } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'
import { usePolled } from '../lib/use-poll.ts'

export function ChatbotsPage() {
  const list = usePolled((signal) => chatbots.list(signal), '')
  const { navigate } = useRouter()
  const { rememberKey, can } = useSession()
  const [name, setName] = useState('')
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)

  const create = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const created = await chatbots.create(name.trim())
      rememberKey(created.chatbot.id, created.apiKey)
      navigate(paths.chatbot(created.chatbot.id))
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }

  return (
    <section className="page">
      <PageHeading title="Chatbots" />
      {can('chatbots:create') ? (
        <section className="card" aria-labelledby="create-heading">
          <h2 id="create-heading">Add a chatbot</h2>
          <p className="muted">Each chatbot gets its own API key, which it sends its conversations with.</p>
          <form onSubmit={create} className="inline-form">
            <div className="field grow">
              <label htmlFor="chatbot-name">Chatbot name</label>
              <input
                id="chatbot-name"
                value={name}
                onChange={(e) => setName(e.target.value)}
                required
                maxLength={100}
                placeholder="e.g. Support bot"
              />
            </div>
            <button type="submit" className="button primary" disabled={busy || name.trim() === ''}>
              {busy ? 'Creating…' : 'Create chatbot'}
            </button>
          </form>
          <ErrorAlert error={error} prefix="The chatbot was not created." />
        </section>
      ) : null}

      <section aria-labelledby="list-heading">
        <h2 id="list-heading">Your chatbots</h2>
        {can('chatbots:create') ? null : (
          <p className="muted">Owners and admins add chatbots (each new one shows its API key).</p>
        )}
        <ErrorAlert error={list.error} />
        {list.loading ? (
          <p role="status">Loading chatbots…</p>
        ) : list.data?.length === 0 ? (
          <p className="empty">
            No chatbots yet.
            {can('chatbots:create')
              ? ' Add one above to get its API key and start sending conversations.'
              : ''}
          </p>
        ) : (
          <ul className="card-list">
            {list.data?.map((bot) => (
              <li key={bot.id} className="card row-card">
                <div>
                  <h3>
                    <Link to={paths.chatbot(bot.id)}>{bot.name}</Link>
                  </h3>
                  <p className="muted">
                    Key <code>{bot.api_key_prefix}</code> · created {formatDate(bot.created_at)}
                    {analysisEnabled(bot.settings) ? '' : ' · analysis off'}
                  </p>
                </div>
                <Link
                  className="button secondary"
                  to={paths.conversations(new URLSearchParams({ chatbotId: bot.id }))}
                  aria-label={`Conversations of ${bot.name}`}
                >
                  Conversations
                </Link>
              </li>
            ))}
          </ul>
        )}
      </section>
    </section>
  )
}
