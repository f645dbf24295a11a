import { ApiError } from '../api/client.ts'
import { conversations } from '../api/endpoints.ts'
import type { ConversationDetail, Message } from '../api/types.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { ExpandableText } from '../components/expandable-text.tsx'
import { Freshness } from '../components/freshness.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { SentimentBadge, TopicList } from '../components/sentiment-badge.tsx'
import { SignalChips } from '../components/signal-chips.tsx'
import { MESSAGE_LIMITS, METADATA_LIMITS } from '../lib/cut-text.ts'
import { formatDateTime, plural } from '../lib/format.ts'
import { Link } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { refinedByText, SIGNAL_MEANINGS, signalName } from '../lib/signals.ts'
import { useChatbotList } from '../lib/use-chatbots.ts'
import { usePolled } from '../lib/use-poll.ts'
import { NotFoundPage } from './not-found.tsx'

const POLL_MS = 3_000

const ROLE_NAMES: Record<string, string> = {
  user: 'End user',
  assistant: 'Assistant',
  system: 'System',
  tool: 'Tool',
}

export function ConversationPage({ id }: { id: string }) {
  const detail = usePolled((signal) => conversations.get(id, signal), id, POLL_MS)
  const bots = useChatbotList()
  const c = detail.data

  if (detail.error instanceof ApiError && detail.error.status === 404)
    return <NotFoundPage what="conversation" />
  if (!c) {
    return (
      <section className="page">
        <ErrorAlert error={detail.error} />
        {detail.error ? null : <p role="status">Loading conversation…</p>}
      </section>
    )
  }
  const chatbotName = bots.data?.find((b) => b.id === c.chatbotId)?.name

  return (
    <section className="page">
      <p className="breadcrumb">
        <Link to={paths.conversations()}>Conversations</Link>
      </p>
      <PageHeading title={`Conversation ${c.conversationId}`} />
      <Freshness />
      <div className="conversation-summary">
        <span className="sentiment-pair">
          End user{' '}
          <SentimentBadge
            sentiment={c.sentiment}
            noEndUserMessage={!c.messages.some((m) => m.role === 'user')}
          />
        </span>
        {c.assistantSentiment ? (
          <span className="sentiment-pair">
            Assistant <SentimentBadge sentiment={c.assistantSentiment} />
          </span>
        ) : null}
        <span className="muted">
          {chatbotName ? (
            <>
              <Link to={paths.chatbot(c.chatbotId)}>{chatbotName}</Link> ·{' '}
            </>
          ) : null}
          {plural(c.messageCount, 'message')} · {formatDateTime(c.firstMessageAt)} to{' '}
          {formatDateTime(c.lastMessageAt)}
        </span>
      </div>
      <TopicList topics={c.topics} topicIds={c.topicIds} chatbotId={c.chatbotId} />
      <SignalChips signals={c.signals} />
      <SignalEvidence conversation={c} />
      <ErrorAlert error={detail.error} prefix="Could not refresh:" />
      <div className="conversation-layout">
        <section aria-labelledby="transcript-heading" className="transcript-section">
          <h2 id="transcript-heading">Transcript</h2>
          <ol className="transcript">
            {c.messages.map((m) => (
              <MessageItem key={m.id} message={m} signals={signalsOn(c, m.id)} />
            ))}
          </ol>
        </section>
        <Metadata conversation={c} />
      </div>
    </section>
  )
}

/** The signals that fired on a message (it is among their evidence). */
function signalsOn(c: ConversationDetail, messageId: string): string[] {
  return c.signals.filter((s) => s.evidence.includes(messageId)).map((s) => signalName(s))
}

/**
 * Each signal of the conversation with its meaning, its confidence (and the LLM that confirmed it, when
 * one did) and the messages it fired on.
 */
function SignalEvidence({ conversation: c }: { conversation: ConversationDetail }) {
  if (c.signals.length === 0) return null
  const position = new Map(c.messages.map((m, i) => [m.id, i + 1]))
  return (
    <section aria-labelledby="signals-heading" className="card signal-evidence">
      <h2 id="signals-heading">Signals</h2>
      <ul>
        {c.signals.map((s) => (
          <li key={s.name}>
            <strong>{signalName(s)}</strong> ({Math.round(s.confidence * 100)} % confidence
            {refinedByText(s) ? `, ${refinedByText(s)}` : ''})
            {SIGNAL_MEANINGS[s.name] ? ` ${SIGNAL_MEANINGS[s.name]}` : ''} On{' '}
            {s.evidence.map((id) => `message ${position.get(id) ?? id}`).join(', ')}.
          </li>
        ))}
      </ul>
    </section>
  )
}

function MessageItem({ message: m, signals }: { message: Message; signals: string[] }) {
  const from = ROLE_NAMES[m.role] ?? m.role
  return (
    <li className={`message role-${m.role === 'user' ? 'user' : 'other'}`}>
      <div className="message-meta">
        <strong>{from}</strong>
        <time dateTime={m.sentAt}>{formatDateTime(m.sentAt)}</time>
        <SentimentBadge sentiment={m.sentiment} />
        {signals.length > 0 ? <span className="message-signals">{signals.join(', ')}</span> : null}
      </div>
      <p className="message-content">
        {m.content === '' ? (
          <em>(empty message)</em>
        ) : (
          <ExpandableText text={m.content} limits={MESSAGE_LIMITS} />
        )}
      </p>
    </li>
  )
}

function Metadata({ conversation: c }: { conversation: ConversationDetail }) {
  const userId = typeof c.user.id === 'string' ? c.user.id : undefined
  const groups: [string, Record<string, unknown>][] = [
    ['End user', c.user],
    ["End user's organization", c.organization],
    ['Session', c.session],
    ['Custom fields', c.custom],
  ]
  return (
    <aside aria-labelledby="metadata-heading" className="card metadata">
      <h2 id="metadata-heading">Details</h2>
      {groups.map(([title, values]) => (
        <section key={title}>
          <h3>{title}</h3>
          {Object.keys(values).length === 0 ? (
            <p className="muted">None sent.</p>
          ) : (
            <dl className="pairs">
              {Object.entries(values).map(([key, value]) => (
                <div key={key}>
                  {/* Long values (older data, before capture refused them) are cut, with a toggle. */}
                  <dt>
                    <ExpandableText text={key} limits={METADATA_LIMITS} />
                  </dt>
                  <dd>
                    <ExpandableText
                      text={typeof value === 'string' ? value : JSON.stringify(value)}
                      limits={METADATA_LIMITS}
                    />
                  </dd>
                </div>
              ))}
            </dl>
          )}
        </section>
      ))}
      {userId ? (
        <p>
          <Link to={paths.conversations(new URLSearchParams({ userId }))}>
            All conversations of this end user
          </Link>
        </p>
      ) : null}
      <p className="muted">
        Your id for it: <code>{c.conversationId}</code>
      </p>
    </aside>
  )
}
