import { type FormEvent, useEffect, useRef, useState } from 'react'
import { ApiError } from '../api/client.ts'
import { analytics, chatbots, conversations } from '../api/endpoints.ts'
import type { Chatbot } from '../api/types.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { ApiKeySection, DeleteSection, KeyReveal } from '../components/chatbot-key.tsx'
import { Onboarding } from '../components/onboarding.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { AverageSentiment } from '../components/sentiment-badge.tsx'
import { SettingsSection } from '../components/settings-section.tsx'
import { formatDate, formatNumber } from '../lib/format.ts'
import { Link } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'
import { usePolled } from '../lib/use-poll.ts'
import { NotFoundPage } from './not-found.tsx'

const WAIT_POLL_MS = 2_000
const LATEST_POLL_MS = 10_000

export function ChatbotPage({ id }: { id: string }) {
  const { can } = useSession()
  const bot = usePolled((signal) => chatbots.get(id, signal), id)
  const [updated, setUpdated] = useState<Chatbot>()
  const chatbot = updated ?? bot.data
  // The newest conversation: often while waiting for the first one, then now and then.
  const [received, setReceived] = useState(false)
  const newest = usePolled(
    (signal) => conversations.list({ chatbotId: id, limit: 1 }, signal),
    id,
    received ? LATEST_POLL_MS : WAIT_POLL_MS,
  )
  const latest = newest.data?.conversations[0]
  useEffect(() => setReceived(latest !== undefined), [latest])

  if (bot.error instanceof ApiError && bot.error.status === 404) return <NotFoundPage what="chatbot" />
  if (!chatbot) {
    return (
      <section className="page">
        <ErrorAlert error={bot.error} />
        {bot.error ? null : <p role="status">Loading chatbot…</p>}
      </section>
    )
  }

  return (
    <section className="page">
      <p className="breadcrumb">
        <Link to={paths.chatbots()}>Chatbots</Link>
      </p>
      <PageHeading title={chatbot.name} />
      <p className="muted">
        Key <code>{chatbot.api_key_prefix}</code> · created {formatDate(chatbot.created_at)}
      </p>
      <KeyReveal chatbot={chatbot} />
      <Onboarding
        key={chatbot.id}
        chatbot={chatbot}
        latest={latest}
        loading={newest.loading}
        onSent={newest.refresh}
      />
      <Summary chatbot={chatbot} latestMessageAt={latest?.lastMessageAt} />
      {can('chatbots:edit') ? <RenameSection chatbot={chatbot} onSaved={setUpdated} /> : null}
      {can('chatbots:edit') ? <SettingsSection chatbot={chatbot} onSaved={setUpdated} /> : null}
      {can('chatbots:rotate-key') ? <ApiKeySection chatbot={chatbot} onRotated={setUpdated} /> : null}
      {can('chatbots:delete') ? <DeleteSection chatbot={chatbot} /> : null}
    </section>
  )
}

/** The last 30 days in figures, read again whenever a newer message arrives. */
function Summary({ chatbot, latestMessageAt }: { chatbot: Chatbot; latestMessageAt: string | undefined }) {
  const overview = usePolled(
    (signal) => analytics.overview({ chatbotId: chatbot.id, days: 30 }, signal),
    chatbot.id,
    30_000,
  )
  const { refresh } = overview
  const seen = useRef(latestMessageAt)
  useEffect(() => {
    if (seen.current === latestMessageAt) return
    seen.current = latestMessageAt
    refresh()
  }, [latestMessageAt, refresh])
  const o = overview.data
  const byChatbot = new URLSearchParams({ chatbotId: chatbot.id })
  return (
    <section className="card" aria-labelledby="summary-heading">
      <h2 id="summary-heading">Last 30 days</h2>
      <ErrorAlert error={overview.error} />
      {o ? (
        <dl className="figures">
          <div>
            <dt>Conversations</dt>
            <dd>{formatNumber(o.totalConversations)}</dd>
          </div>
          <div>
            <dt>Messages</dt>
            <dd>{formatNumber(o.totalMessages)}</dd>
          </div>
          <div>
            <dt>End users' sentiment</dt>
            <dd>
              <AverageSentiment average={o.sentiment.average} />
            </dd>
          </div>
        </dl>
      ) : null}
      <p className="actions">
        <Link to={paths.conversations(byChatbot)}>View its conversations</Link>
        <Link to={paths.topics(byChatbot)}>View its topics</Link>
        <Link to={`${paths.analytics()}?${byChatbot}`}>View its analytics</Link>
      </p>
    </section>
  )
}

function RenameSection({ chatbot, onSaved }: { chatbot: Chatbot; onSaved: (c: Chatbot) => void }) {
  const [name, setName] = useState(chatbot.name)
  const [error, setError] = useState<unknown>()
  const [saved, setSaved] = useState(false)
  const [busy, setBusy] = useState(false)
  const save = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    setSaved(false)
    try {
      onSaved(await chatbots.update(chatbot.id, { name: name.trim() }))
      setSaved(true)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  const unchanged = name.trim() === chatbot.name || name.trim() === ''
  return (
    <section className="card" aria-labelledby="rename-heading">
      <h2 id="rename-heading">Name</h2>
      <form onSubmit={save} className="inline-form">
        <div className="field grow">
          <label htmlFor="rename">Chatbot name</label>
          <input
            id="rename"
            value={name}
            maxLength={100}
            required
            onChange={(e) => {
              setName(e.target.value)
              setSaved(false)
            }}
          />
        </div>
        <button type="submit" className="button secondary" disabled={busy || unchanged}>
          Rename
        </button>
      </form>
      <p role="status" className="success-text">
        {saved ? 'Name saved.' : ''}
      </p>
      <ErrorAlert error={error} prefix="The name was not saved." />
    </section>
  )
}
