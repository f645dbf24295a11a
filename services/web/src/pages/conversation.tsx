import { ApiError } from '../api/client.ts'
import { conversations } from '../api/endpoints.ts'
import type { ConversationDetail, Message } from '../api/types.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { ExpandableText } from '../components/expandable-text.tsx'
import { Freshness } from '../components/freshness.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { SentimentBadge, TopicList } from '../components/sentiment-badge.tsx'
import { MESSAGE_LIMITS, METADATA_LIMITS } from '../lib/cut-text.ts'
import { formatDateTime, plural } from '../lib/format.ts'
import { Link } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
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
          End user <SentimentBadge sentiment={c.sentiment} />
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
      <ErrorAlert error={detail.error} prefix="Could not refresh:" />
      <div className="conversation-layout">
        <section aria-labelledby="transcript-heading" className="transcript-section">
          <h2 id="transcript-heading">Transcript</h2>
          <ol className="transcript">
            {c.messages.map((m) => (
              <MessageItem key={m.id} message={m} />
            ))}
          </ol>
        </section>
        <Metadata conversation={c} />
      </div>
    </section>
  )
}

function MessageItem({ message: m }: { message: Message }) {
  const from = ROLE_NAMES[m.role] ?? m.role
  return (
    <li className={`message role-${m.role === 'user' ? 'user' : 'other'}`}>
      <div className="message-meta">
        <strong>{from}</strong>
        <time dateTime={m.sentAt}>{formatDateTime(m.sentAt)}</time>
        <SentimentBadge sentiment={m.sentiment} />
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
