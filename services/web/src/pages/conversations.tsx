import { type FormEvent, useEffect, useMemo, useState } from 'react'
import { ApiError } from '../api/client.ts'
import { analytics, conversations } from '../api/endpoints.ts'
import type { Chatbot, Conversation } from '../api/types.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { Freshness } from '../components/freshness.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { CursorPager } from '../components/pager.tsx'
import { SentimentBadge, TopicList } from '../components/sentiment-badge.tsx'
import { SignalChips } from '../components/signal-chips.tsx'
import { shortText } from '../lib/cut-text.ts'
import {
  type ConversationFilters,
  conversationQuery,
  filtersFromSearch,
  filtersProblem,
  filtersToggleLabel,
  filtersToSearch,
  hasFilters,
} from '../lib/filters.ts'
import { endUserName, formatDateTime, NO_END_USER_MESSAGE, plural } from '../lib/format.ts'
import { Link, useRouter } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { filterSignalName } from '../lib/signals.ts'
import { themeFilterLabel, themeName } from '../lib/themes.ts'
import { topicFilterLabel, topicForInput, topicToApply } from '../lib/topics.ts'
import { useChatbotList } from '../lib/use-chatbots.ts'
import { usePolled } from '../lib/use-poll.ts'

const PAGE_SIZE = 20
/** The end user's name in the list is cut here (older data has names of 1 MB); the conversation has all. */
const USER_NAME_CHARS = 80
const POLL_MS = 3_000

export function ConversationsPage() {
  const { location, navigate } = useRouter()
  const applied = useMemo(() => filtersFromSearch(location.search), [location.search])
  const [draft, setDraft] = useState<ConversationFilters>(applied)
  const [problem, setProblem] = useState<string>()
  // On a phone the filters are behind a toggle, closed at first: the conversations come first.
  const [filtersOpen, setFiltersOpen] = useState(false)
  // The cursors of the pages up to the current one (the first page has none), for these filters only.
  const [paging, setPaging] = useState({
    search: location.search,
    cursors: [undefined] as (string | undefined)[],
  })
  const cursors = paging.search === location.search ? paging.cursors : [undefined]
  const cursor = cursors.at(-1)
  const setCursors = (change: (cs: (string | undefined)[]) => (string | undefined)[]) =>
    setPaging({ search: location.search, cursors: change(cursors) })

  useEffect(() => setDraft(applied), [applied])

  const bots = useChatbotList()
  const topics = usePolled((signal) => analytics.overview({ days: 90 }, signal), '')
  // The themes to filter by: those of the topics of the last 90 days (one topic asked for: themes are all).
  const themeReport = usePolled(
    (signal) => analytics.topics({ days: 90, interval: 'week', limit: 1 }, signal),
    'themes',
  )
  const themes = themeReport.data?.themes ?? []
  const themeLabel = themeFilterLabel(applied.theme, themes)
  const page = usePolled(
    (signal) => conversations.list(conversationQuery(applied, PAGE_SIZE, cursor), signal),
    `${location.search}|${cursor ?? ''}`,
    POLL_MS,
  )
  const names = new Map((bots.data ?? []).map((b) => [b.id, b.name]))
  // A topic link filters by the topic's id: the page names it by its label, in the Topic box too.
  const topicLabel = topicFilterLabel(
    applied.topic,
    page.data?.conversations ?? [],
    topics.data?.topTopics ?? [],
  )

  useEffect(
    () => setDraft({ ...applied, topic: topicForInput(applied.topic, topicLabel) }),
    [applied, topicLabel],
  )

  const apply = (event: FormEvent) => {
    event.preventDefault()
    const found = filtersProblem(draft)
    setProblem(found)
    const topic = topicToApply(draft.topic, applied.topic, topicLabel)
    if (!found) {
      setFiltersOpen(false)
      navigate(paths.conversations(filtersToSearch({ ...draft, topic })))
    }
  }

  return (
    <section className="page">
      <PageHeading title="Conversations" />
      <Freshness />
      <p className="filters-toggle">
        <button
          type="button"
          className="button secondary"
          aria-expanded={filtersOpen}
          aria-controls="conversation-filters"
          onClick={() => setFiltersOpen((open) => !open)}
        >
          {filtersToggleLabel(applied)}
        </button>
      </p>
      <form
        id="conversation-filters"
        onSubmit={apply}
        className={`card filters${filtersOpen ? '' : ' closed-on-phone'}`}
        aria-label="Filter conversations"
      >
        <FilterFields
          draft={draft}
          setDraft={setDraft}
          bots={bots.allowed ? (bots.data ?? []) : null}
          topics={topics.data?.topTopics ?? []}
          themes={themes.map((t) => ({ id: t.id, name: themeName(t, names.size > 1 ? names : undefined) }))}
        />
        <ErrorAlert error={problem} />
        <div className="actions">
          <button type="submit" className="button primary">
            Apply filters
          </button>
          {hasFilters(applied) ? (
            <button type="button" className="button subtle" onClick={() => navigate(paths.conversations())}>
              Clear filters
            </button>
          ) : null}
        </div>
      </form>

      <section aria-labelledby="results-heading">
        <h2 id="results-heading">
          {hasFilters(applied) ? 'Matching conversations' : 'Latest conversations'}
        </h2>
        <p className="muted">
          Newest first. New conversations and analysis results appear here by themselves.
        </p>
        {applied.since || applied.until ? (
          <p className="active-filter">
            <span>
              Last message{' '}
              <strong>
                {applied.since ? `from ${formatDateTime(applied.since)}` : ''}
                {applied.since && applied.until ? ' ' : ''}
                {applied.until ? `before ${formatDateTime(applied.until)}` : ''}
              </strong>{' '}
              (the range of the figures you came from)
            </span>
            <button
              type="button"
              className="button subtle"
              onClick={() =>
                navigate(paths.conversations(filtersToSearch({ ...applied, since: '', until: '' })))
              }
            >
              Clear this range
            </button>
          </p>
        ) : null}
        {applied.signal ? (
          <p className="active-filter">
            <span>
              Signal: <strong>{filterSignalName(applied.signal, page.data?.conversations ?? [])}</strong>
            </span>
            <button
              type="button"
              className="button subtle"
              onClick={() => navigate(paths.conversations(filtersToSearch({ ...applied, signal: '' })))}
            >
              Clear signal filter
            </button>
          </p>
        ) : null}
        {applied.topic ? (
          <p className="active-filter">
            <span>
              Topic: <strong>{topicLabel ?? applied.topic}</strong>
            </span>
            <button
              type="button"
              className="button subtle"
              onClick={() => navigate(paths.conversations(filtersToSearch({ ...applied, topic: '' })))}
            >
              Clear topic filter
            </button>
            <Link
              to={paths.topics(
                applied.chatbotId ? new URLSearchParams({ chatbotId: applied.chatbotId }) : undefined,
              )}
            >
              All topics
            </Link>
          </p>
        ) : null}
        {applied.theme ? (
          <p className="active-filter">
            <span>
              Theme: <strong>{themeLabel ?? 'a theme no longer listed'}</strong>
            </span>
            <button
              type="button"
              className="button subtle"
              onClick={() => navigate(paths.conversations(filtersToSearch({ ...applied, theme: '' })))}
            >
              Clear theme filter
            </button>
          </p>
        ) : null}
        {applied.chatbotId && page.error instanceof ApiError && page.error.status === 404 ? (
          // A bookmarked link to a chatbot since deleted (or of another organization): say so, offer the rest.
          <div className="alert error" role="alert">
            <p>There is no such chatbot in your organization (it may have been deleted).</p>
            <button
              type="button"
              className="button secondary"
              onClick={() => navigate(paths.conversations(filtersToSearch({ ...applied, chatbotId: '' })))}
            >
              Show every chatbot's conversations
            </button>
          </div>
        ) : (
          <ErrorAlert error={page.error} />
        )}
        {page.loading ? (
          <p role="status">Loading conversations…</p>
        ) : page.data?.conversations.length === 0 ? (
          <p className="empty">
            {hasFilters(applied)
              ? 'No conversation matches these filters.'
              : 'No conversations yet. Open a chatbot to see how to send one.'}
          </p>
        ) : (
          <ol className="card-list conversation-list">
            {page.data?.conversations.map((c) => (
              <ConversationItem key={c.id} conversation={c} chatbotName={names.get(c.chatbotId)} />
            ))}
          </ol>
        )}
        <CursorPager
          label="Conversation pages"
          cursors={cursors}
          nextCursor={page.data?.nextCursor}
          onChange={setCursors}
        />
      </section>
    </section>
  )
}

function FilterFields({
  draft,
  setDraft,
  bots,
  topics,
  themes,
}: {
  draft: ConversationFilters
  setDraft: (f: ConversationFilters) => void
  /** null: the role may not read chatbots, so there is nothing to choose from. */
  bots: readonly Chatbot[] | null
  topics: readonly { topic: string }[]
  themes: readonly { id: string; name: string }[]
}) {
  const set = (key: keyof ConversationFilters) => (e: { target: { value: string } }) =>
    setDraft({ ...draft, [key]: e.target.value })
  return (
    <div className="filter-grid">
      {bots ? (
        <div className="field">
          <label htmlFor="f-chatbot">Chatbot</label>
          <select id="f-chatbot" value={draft.chatbotId} onChange={set('chatbotId')}>
            <option value="">All chatbots</option>
            {bots.map((b) => (
              <option key={b.id} value={b.id}>
                {b.name}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <div className="field">
        <label htmlFor="f-q">Text in messages</label>
        <input id="f-q" type="search" value={draft.q} onChange={set('q')} maxLength={200} />
      </div>
      <div className="field">
        <label htmlFor="f-sentiment">Sentiment</label>
        <select id="f-sentiment" value={draft.sentiment} onChange={set('sentiment')}>
          <option value="">Any sentiment</option>
          <option value="positive">Positive</option>
          <option value="neutral">Neutral</option>
          <option value="negative">Negative</option>
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-topic">Topic</label>
        <input id="f-topic" list="f-topic-list" value={draft.topic} onChange={set('topic')} maxLength={200} />
        <datalist id="f-topic-list">
          {/* Topics of several chatbots can share a label: each is suggested once. */}
          {[...new Set(topics.map((t) => t.topic))].map((label) => (
            <option key={label} value={label} />
          ))}
        </datalist>
      </div>
      {themes.length > 0 || draft.theme ? (
        <div className="field">
          <label htmlFor="f-theme">Theme</label>
          <select id="f-theme" value={draft.theme} onChange={set('theme')}>
            <option value="">Any theme</option>
            {draft.theme && !themes.some((t) => t.id === draft.theme) ? (
              <option value={draft.theme}>A theme no longer listed</option>
            ) : null}
            {themes.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <div className="field">
        <label htmlFor="f-user">End user id</label>
        <input id="f-user" value={draft.userId} onChange={set('userId')} maxLength={256} />
      </div>
      <div className="field">
        <label htmlFor="f-from">Last message from</label>
        <input id="f-from" type="date" value={draft.from} onChange={set('from')} />
      </div>
      <div className="field">
        <label htmlFor="f-to">Last message until</label>
        <input id="f-to" type="date" value={draft.to} onChange={set('to')} />
      </div>
    </div>
  )
}

function ConversationItem({
  conversation: c,
  chatbotName,
}: {
  conversation: Conversation
  chatbotName?: string
}) {
  const name = endUserName(c.user)
  const user = name === undefined ? undefined : shortText(name, USER_NAME_CHARS)
  return (
    <li className="card conversation-item">
      <div className="conversation-head">
        <h3>
          <Link to={paths.conversation(c.id)}>{c.conversationId}</Link>
        </h3>
        <SentimentBadge sentiment={c.sentiment} noEndUserMessage={c.preview === null} />
      </div>
      <p className="muted">
        {[chatbotName, user ? `with ${user}` : undefined, plural(c.messageCount, 'message')]
          .filter(Boolean)
          .join(' · ')}
        {' · last '}
        <time dateTime={c.lastMessageAt}>{formatDateTime(c.lastMessageAt)}</time>
      </p>
      {/* What the end user came with, first: what a support lead scans the list for. */}
      {c.preview === null ? (
        <p className="conversation-preview muted">{NO_END_USER_MESSAGE}.</p>
      ) : (
        <p className="conversation-preview">{c.preview}</p>
      )}
      <TopicList topics={c.topics} topicIds={c.topicIds} chatbotId={c.chatbotId} />
      <SignalChips signals={c.signals} />
    </li>
  )
}
