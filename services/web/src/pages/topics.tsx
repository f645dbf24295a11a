import { useEffect, useMemo, useState } from 'react'
import { analytics, reanalysis, topics as topicCommands } from '../api/endpoints.ts'
import type { Topic, TopicFigures, TopicsReport } from '../api/types.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { Freshness } from '../components/freshness.tsx'
import { LanguageNotice } from '../components/language-notice.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { RangeForm } from '../components/range-form.tsx'
import { RecentTopicChanges } from '../components/recent-topic-changes.tsx'
import { SentimentBadge, SentimentLabelBadge } from '../components/sentiment-badge.tsx'
import { RankingChart, TrendChart } from '../components/topic-charts.tsx'
import {
  analyticsQuery,
  selectionFromSearch,
  selectionToSearch,
  viewerTimeZone,
} from '../lib/analytics-range.ts'
import {
  formatDateTime,
  formatNumber,
  formatShare,
  plural,
  SENTIMENT_SCALE,
  sentimentOf,
} from '../lib/format.ts'
import { Link, useRouter } from '../lib/router.tsx'
import { paths, type ReportRange } from '../lib/routes.ts'
import { useSession } from '../lib/session.tsx'
import {
  groupByTheme,
  NO_THEME_NOTE,
  THEME_COLUMNS,
  type ThemeGroup,
  themeName,
  themeRows,
  themeSharesNote,
} from '../lib/themes.ts'
import {
  examplesToSend,
  labelToSend,
  MAX_TOPICS,
  mergeTargets,
  OTHER_TOPIC_ID,
  OTHER_TOPIC_LABEL,
  TOPICS_PAGE,
  topicsQuery,
} from '../lib/topics.ts'
import { useChatbotList } from '../lib/use-chatbots.ts'
import { usePolled } from '../lib/use-poll.ts'

const POLL_MS = 10_000
const EMPTY = 'No topics in this range yet. Topics appear once several end users ask about the same thing.'

export function TopicsPage() {
  const { location, navigate } = useRouter()
  const selection = useMemo(() => selectionFromSearch(location.search), [location.search])
  // "Show more topics" raises the limit for this selection only.
  const [more, setMore] = useState({ search: location.search, limit: TOPICS_PAGE })
  const limit = more.search === location.search ? more.limit : TOPICS_PAGE

  const tz = viewerTimeZone()
  const query = topicsQuery(selection, tz, limit)
  const bots = useChatbotList()
  // When a topic command was last sent from this page: the list of recent changes follows it.
  const [sentAt, setSentAt] = useState(0)
  const report = usePolled((signal) => analytics.topics(query, signal), JSON.stringify(query), POLL_MS)
  // Only for the language notice: whether these topics were found in messages the model cannot read.
  const overviewQuery = analyticsQuery(selection, tz)
  const overview = usePolled(
    (signal) => analytics.overview(overviewQuery, signal),
    `${JSON.stringify(overviewQuery)}|languages`,
    POLL_MS,
  )
  // Topics belong to a chatbot: with all chatbots shown, each topic says whose it is.
  const names =
    selection.chatbotId === '' && (bots.data?.length ?? 0) > 1
      ? new Map(bots.data?.map((b) => [b.id, b.name]))
      : undefined

  return (
    <section className="page">
      <PageHeading title="Topics" />
      <Freshness />
      <p className="muted">
        What end users ask about: topics found in their messages by a language model, and your chatbots' own
        topics. The assistant's words never make a topic.
      </p>
      <RangeForm
        idPrefix="t"
        selection={selection}
        chatbots={bots.allowed ? (bots.data ?? []) : null}
        onApply={(s) => navigate(paths.topics(selectionToSearch(s)))}
      />
      <ErrorAlert error={report.error} />
      <LanguageNotice
        languages={overview.data?.languages}
        scope={selection.chatbotId ? 'this chatbot' : 'these chatbots'}
      />
      {report.data ? (
        <Report
          report={report.data}
          tz={tz}
          names={names}
          chatbotId={selection.chatbotId || undefined}
          limit={limit}
          onMore={() => setMore({ search: location.search, limit: limit + TOPICS_PAGE })}
          onChanged={() => {
            report.refresh()
            setSentAt(Date.now())
          }}
        />
      ) : report.loading ? (
        <p role="status">Loading topics…</p>
      ) : null}
      {selection.chatbotId ? <RecentTopicChanges chatbotId={selection.chatbotId} sentAt={sentAt} /> : null}
    </section>
  )
}

function Report({
  report,
  tz,
  names,
  chatbotId,
  limit,
  onMore,
  onChanged,
}: {
  report: TopicsReport
  tz: string
  names?: Map<string, string>
  chatbotId?: string
  limit: number
  onMore: () => void
  onChanged: () => void
}) {
  const { can } = useSession()
  const manage = can('topics:manage')
  const quiet = (
    <QuietTopics
      report={report}
      names={names}
      manage={manage ? { topics: report.topics, onChanged } : undefined}
    />
  )
  const hidden = manage ? (
    <>
      {chatbotId ? <CreateTopic chatbotId={chatbotId} onChanged={onChanged} /> : null}
      {chatbotId ? <Reanalyse chatbotId={chatbotId} onFinished={onChanged} /> : null}
      <HiddenTopics report={report} onChanged={onChanged} />
    </>
  ) : null
  if (report.topics.length === 0 && !report.other)
    return (
      <>
        <p className="muted">
          {formatDateTime(report.range.from)} to {formatDateTime(report.range.to)} ({tz}).
        </p>
        <p className="empty">{EMPTY}</p>
        {/* Requests waiting to be re-clustered, a failed run, or the last run are news even without topics. */}
        {report.reclustering.settling ||
        report.reclustering.retrying ||
        report.reclustering.lastReclusteredAt ? (
          <Reclustering reclustering={report.reclustering} />
        ) : null}
        {quiet}
        {hidden}
      </>
    )
  return (
    <>
      <p className="muted">
        {formatDateTime(report.range.from)} to {formatDateTime(report.range.to)} ({tz}).{' '}
        {plural(report.conversationsWithTopics, 'conversation')} with a topic or in Other. Updates by itself.
      </p>
      <Reclustering reclustering={report.reclustering} />
      {report.topics.length > 0 ? (
        <div className="chart-grid">
          <RankingChart report={report} names={names} chatbotId={chatbotId} />
          <TrendChart report={report} names={names} />
        </div>
      ) : null}
      {report.themes.length > 0 ? <ThemeTable report={report} names={names} /> : null}
      <section aria-labelledby="ranked-heading">
        <h2 id="ranked-heading">
          {report.themes.length > 0
            ? 'Topics by theme, most conversations first'
            : 'Topics, most conversations first'}
        </h2>
        {report.topics.length > 0 && report.themes.length === 0 ? (
          <p className="muted">{NO_THEME_NOTE}</p>
        ) : null}
        {report.topics.length === 0 ? (
          <p className="empty">{EMPTY}</p>
        ) : report.themes.length > 0 ? (
          groupByTheme(report).map((group) => (
            <ThemeSection
              key={group.theme ? `${group.theme.chatbotId}|${group.theme.id}` : ''}
              group={group}
              names={names}
              range={report.range}
              manage={manage ? { topics: report.topics, onChanged } : undefined}
            />
          ))
        ) : (
          <ol className="card-list topic-list">
            {report.topics.map((t, i) => (
              <TopicItem
                key={t.id}
                topic={t}
                rank={i + 1}
                chatbotName={names?.get(t.chatbotId)}
                range={report.range}
                manage={manage ? { topics: report.topics, onChanged } : undefined}
              />
            ))}
          </ol>
        )}
        {report.topics.length >= limit && limit < MAX_TOPICS ? (
          <p className="actions">
            <button type="button" className="button secondary" onClick={onMore}>
              Show more topics
            </button>
          </p>
        ) : null}
      </section>
      {report.other ? <OtherItem other={report.other} chatbotId={chatbotId} range={report.range} /> : null}
      {quiet}
      {hidden}
    </>
  )
}

/**
 * The topics a lead keeps (renamed, created or merged into) that no conversation in range is in: re-clustering
 * never retires them, so a correction stays in sight; owners and admins can manage each as a ranked one.
 */
function QuietTopics({
  report,
  names,
  manage,
}: {
  report: TopicsReport
  names?: Map<string, string>
  manage?: { topics: readonly Topic[]; onChanged: () => void }
}) {
  if (report.quietTopics.length === 0) return null
  return (
    <section aria-labelledby="quiet-heading" className="card">
      <h2 id="quiet-heading">Your topics with no conversations in this range</h2>
      <p className="muted">
        Renamed, created or merged into by a lead; they take conversations again as they come.
      </p>
      <ul className="topic-quiet-list">
        {report.quietTopics.map((t) => (
          <li key={`${t.chatbotId}|${t.id}`}>
            {t.label}
            {names?.get(t.chatbotId) ? <span className="muted"> · {names.get(t.chatbotId)}</span> : null}
            {manage ? (
              <ManageTopic
                topic={{ ...t, configured: false }}
                topics={manage.topics}
                onChanged={manage.onChanged}
              />
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  )
}

/** Owners and admins: the hidden topics, each with a button to show it again. */
function HiddenTopics({ report, onChanged }: { report: TopicsReport; onChanged: () => void }) {
  const [error, setError] = useState<unknown>()
  if (report.hiddenTopics.length === 0) return null
  return (
    <section aria-labelledby="hidden-heading" className="card">
      <h2 id="hidden-heading">Hidden topics</h2>
      <ErrorAlert error={error} />
      <ul className="topic-hidden-list">
        {report.hiddenTopics.map((t) => (
          <li key={t.id}>
            {t.label}{' '}
            {/* The label is beside it: the button says only "Show again" (with the label, a long one ran off a
                320 px screen: trial12), and is named with the label for a screen reader. */}
            <button
              type="button"
              className="button secondary"
              aria-label={`Show again: ${t.label}`}
              onClick={async () => {
                try {
                  await topicCommands.unhide(t.chatbotId, t.id)
                  setError(undefined)
                  onChanged()
                } catch (err) {
                  setError(err)
                }
              }}
            >
              Show again
            </button>
          </li>
        ))}
      </ul>
    </section>
  )
}

/**
 * Owners and admins: a topic of their own, from a label and example requests (one a line). The analysis
 * service creates it and moves into it the requests that lie clearly nearer it; it shows once it has.
 */
function CreateTopic({ chatbotId, onChanged }: { chatbotId: string; onChanged: () => void }) {
  const [label, setLabel] = useState('')
  const [typed, setTyped] = useState('')
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const [asked, setAsked] = useState<string>()
  const labelOk = labelToSend(label, '')
  const examples = examplesToSend(typed)
  return (
    <details className="topic-manage">
      <summary>Manage: create a topic from examples</summary>
      <ErrorAlert error={error} />
      {asked ? (
        <p role="status" className="muted">
          Creating {asked}: it shows in the list once the analysis has created it.
        </p>
      ) : null}
      <form
        onSubmit={async (e) => {
          e.preventDefault()
          if (!labelOk || !examples) return
          setBusy(true)
          try {
            const { topic } = await topicCommands.create(chatbotId, labelOk, examples)
            setError(undefined)
            setAsked(topic.label)
            setLabel('')
            setTyped('')
            onChanged()
          } catch (err) {
            setError(err)
          } finally {
            setBusy(false)
          }
        }}
      >
        <label htmlFor="create-topic-label">Label</label>
        <input
          id="create-topic-label"
          value={label}
          maxLength={80}
          onChange={(e) => setLabel(e.target.value)}
        />
        <label htmlFor="create-topic-examples">Example requests, one a line (2 to 20)</label>
        <textarea
          id="create-topic-examples"
          rows={5}
          value={typed}
          onChange={(e) => setTyped(e.target.value)}
        />
        <button type="submit" className="button" disabled={busy || !labelOk || !examples}>
          Create topic
        </button>
      </form>
    </details>
  )
}

/** How long after a re-analysis ends the page reads the analyzers again while some are outdated. */
const ANALYZERS_SETTLE_MS = 120_000

/**
 * Owners and admins: re-analyse the chatbot's past messages with the analyzer the service runs now (as
 * `npm run reanalyze` does), and follow it: a progress bar, polled every 2 s while it runs; a run that
 * could not be started shows as failed, with its reason, and may be asked for again.
 */
function Reanalyse({ chatbotId, onFinished }: { chatbotId: string; onFinished: () => void }) {
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const [asked, setAsked] = useState<string>()
  const [running, setRunning] = useState(false)
  // Read once, and again when a run ends: a count over the chatbot's messages, not worth polling. After a
  // run it is read every 3 s for up to ANALYZERS_SETTLE_MS while messages still carry an earlier analyzer's
  // results: in Kafka mode the run's last results reach the read model a moment after it reports its end,
  // and a single read then kept the note until the page was reloaded.
  const [settleUntil, setSettleUntil] = useState(0)
  const analyzers = usePolled(
    (signal) => reanalysis.analyzers(chatbotId, signal),
    chatbotId,
    settleUntil > 0 ? 3_000 : undefined,
  )
  const stillOutdated = analyzers.data?.outdated
  useEffect(() => {
    if (settleUntil === 0) return
    if (!stillOutdated) {
      setSettleUntil(0)
      return
    }
    const timer = setTimeout(() => setSettleUntil(0), Math.max(settleUntil - Date.now(), 0))
    return () => clearTimeout(timer)
  }, [settleUntil, stillOutdated])
  const latest = usePolled(
    async (signal) => {
      const r = await reanalysis.latest(chatbotId, signal)
      const now = r !== null && (r.status === 'running' || (asked !== undefined && r.id !== asked))
      if (running && !now) {
        onFinished()
        analyzers.refresh()
        setSettleUntil(Date.now() + ANALYZERS_SETTLE_MS)
      }
      setRunning(now || (asked !== undefined && r === null))
      return r
    },
    chatbotId,
    running ? 2_000 : undefined,
  )
  const r = latest.data
  const waiting = asked !== undefined && (r === undefined || r === null || r.id !== asked)
  // The progress shows outside the fold: the page may redraw it (a fold closes then), and it should be seen.
  const progress = waiting ? (
    <p role="status" className="muted">
      Re-analysis asked for: starting…
    </p>
  ) : r?.status === 'failed' ? (
    <div role="status" className="reanalysis alert error">
      <p>
        {`Re-analysis (${r.analyzer}) failed${r.finished_at ? ` ${formatDateTime(r.finished_at)}` : ''}: ${r.reason ?? 'it could not be started.'}`}
      </p>
    </div>
  ) : r ? (
    <div role="status" className="reanalysis">
      <p className="muted">
        {r.status === 'running'
          ? `Re-analysing with ${r.analyzer}: ${formatNumber(r.done)} of ${formatNumber(r.total)} done.`
          : `Last re-analysis (${r.analyzer}) finished ${r.finished_at ? formatDateTime(r.finished_at) : ''}: ${formatNumber(r.done)} of ${formatNumber(r.total)} analysed${r.failed ? `, ${formatNumber(r.failed)} failed` : ''}.`}
      </p>
      <progress
        aria-label="Re-analysis progress"
        value={r.status === 'running' ? r.done : r.total}
        max={Math.max(r.total, 1)}
      />
    </div>
  ) : null
  const a = analyzers.data
  // trial8: after an upgrade, past messages keep the earlier analyzer's results, and nothing said so.
  const outdated =
    !waiting && r?.status !== 'running' && a?.current && a.outdated ? (
      <div className="alert warning" role="note" aria-label="Earlier analyzer">
        <p>
          {`${formatNumber(a.outdated)} of ${formatNumber(a.analyzers.reduce((n, x) => n + x.messages, 0))} analysed messages carry the results of an earlier analyzer than the one in use now. Re-analyse this chatbot to bring their sentiment, topics and signals up to date.`}
        </p>
      </div>
    ) : null
  return (
    <>
      {progress}
      {outdated}
      <details className="topic-manage">
        <summary>Manage: re-analyse this chatbot</summary>
        <p className="muted">
          Sends the chatbot's past messages through the analyzer in use now: their sentiment, topics and
          signals are computed again. Topics and figures update as it goes.
        </p>
        <ErrorAlert error={error ?? latest.error} />
        <button
          type="button"
          className="button"
          disabled={busy || waiting || r?.status === 'running'}
          onClick={async () => {
            setBusy(true)
            try {
              const { reanalysisId } = await reanalysis.start(chatbotId)
              setError(undefined)
              setAsked(reanalysisId)
              setRunning(true)
            } catch (err) {
              setError(err)
            } finally {
              setBusy(false)
            }
          }}
        >
          Re-analyse
        </button>
      </details>
    </>
  )
}

/** Owners and admins: rename (pins the label), hide, merge into another topic of the chatbot. */
function ManageTopic({
  topic: t,
  topics,
  onChanged,
}: {
  topic: Pick<Topic, 'id' | 'chatbotId' | 'label' | 'configured'>
  topics: readonly Topic[]
  onChanged: () => void
}) {
  const [label, setLabel] = useState(t.label)
  const targets = mergeTargets(topics, t)
  const [into, setInto] = useState('')
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const run = async (command: () => Promise<unknown>) => {
    setBusy(true)
    try {
      await command()
      setError(undefined)
      onChanged()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  const toSend = labelToSend(label, t.label)
  return (
    <details className="topic-manage">
      <summary>Manage {t.label}</summary>
      <ErrorAlert error={error} />
      {t.configured ? (
        <p className="muted">One of the chatbot's own topics: rename it in the chatbot's settings.</p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            if (toSend) void run(() => topicCommands.rename(t.chatbotId, t.id, toSend))
          }}
        >
          <label htmlFor={`rename-${t.id}`}>New label</label>
          <input
            id={`rename-${t.id}`}
            value={label}
            maxLength={80}
            onChange={(e) => setLabel(e.target.value)}
          />
          <button type="submit" className="button" disabled={busy || !toSend}>
            Rename
          </button>
        </form>
      )}
      {targets.length > 0 ? (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            if (into) void run(() => topicCommands.merge(t.chatbotId, t.id, into))
          }}
        >
          <label htmlFor={`merge-${t.id}`}>Merge into</label>
          <select id={`merge-${t.id}`} value={into} onChange={(e) => setInto(e.target.value)}>
            <option value="">Choose a topic…</option>
            {targets.map((m) => (
              <option key={m.id} value={m.id}>
                {m.label}
              </option>
            ))}
          </select>
          <button type="submit" className="button secondary" disabled={busy || !into}>
            Merge
          </button>
        </form>
      ) : null}
      <p className="actions">
        <button
          type="button"
          className="button secondary"
          disabled={busy}
          onClick={() => void run(() => topicCommands.hide(t.chatbotId, t.id))}
        >
          Hide from analytics
        </button>
      </p>
    </details>
  )
}

/** Topics are re-clustered in the background as requests arrive: say when they may still change. */
function Reclustering({ reclustering }: { reclustering: TopicsReport['reclustering'] }) {
  const last = reclustering.lastReclusteredAt
  return (
    <p className="muted" role="status">
      {reclustering.settling
        ? 'Topics are settling: new requests are re-clustered within a few minutes, and topics may split or merge.'
        : 'Topics are settled.'}{' '}
      {last ? `Last re-clustered ${formatDateTime(last)}.` : 'Not re-clustered yet.'}
      {reclustering.retrying
        ? ` The last re-clustering failed (${reclustering.retrying.attempts} ${reclustering.retrying.attempts === 1 ? 'attempt' : 'attempts'}); it is tried again from ${formatDateTime(reclustering.retrying.nextAttemptAt)}.`
        : ''}
    </p>
  )
}

/** Each theme's totals, most conversations first, each linking to its conversations. */
function ThemeTable({ report, names }: { report: TopicsReport; names?: Map<string, string> }) {
  const rows = themeRows(report, names)
  return (
    <section aria-labelledby="themes-heading">
      <h2 id="themes-heading">Themes</h2>
      <p className="muted">{themeSharesNote(report)}</p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard. */}
      <section className="table-scroll" tabIndex={0} aria-label="Themes (table)">
        <table>
          <caption className="visually-hidden">Themes</caption>
          <thead>
            <tr>
              {THEME_COLUMNS.map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {report.themes.map((theme, i) => {
              const [name, ...cells] = rows[i]!.cells
              return (
                <tr key={rows[i]!.key}>
                  <th scope="row">
                    <Link to={paths.themeConversations(theme.id, theme.chatbotId, report.range)}>{name}</Link>
                  </th>
                  {cells.map((cell, j) => (
                    <td key={THEME_COLUMNS[j + 1]}>{typeof cell === 'number' ? formatNumber(cell) : cell}</td>
                  ))}
                </tr>
              )
            })}
          </tbody>
        </table>
      </section>
    </section>
  )
}

/** A theme's heading with its totals, then its shown topics; the topics in no theme under their own heading. */
function ThemeSection({
  group,
  names,
  range,
  manage,
}: {
  group: ThemeGroup
  names?: Map<string, string>
  /** The report's range: the links to the conversations cover it. */
  range: ReportRange
  manage?: { topics: readonly Topic[]; onChanged: () => void }
}) {
  const { theme } = group
  const headingId = `theme-${theme ? `${theme.chatbotId}-${theme.id}` : 'none'}`
  return (
    <section className="theme-group" aria-labelledby={headingId}>
      <h3 id={headingId}>
        {theme ? themeName(theme, names) : 'In no theme'}
        {theme ? (
          <span className="theme-totals muted">
            {' '}
            · {plural(theme.conversations, 'conversation')} ({formatShare(theme.share)}) ·{' '}
            {plural(theme.messages, 'end-user message')}
          </span>
        ) : null}
      </h3>
      {theme ? (
        <p className="topic-link">
          <Link to={paths.themeConversations(theme.id, theme.chatbotId, range)}>
            Conversations about {theme.label}
          </Link>
        </p>
      ) : (
        <p className="muted">{NO_THEME_NOTE}</p>
      )}
      <ol className="card-list topic-list">
        {group.topics.map(({ topic: t, rank }) => (
          <TopicItem
            key={t.id}
            topic={t}
            rank={rank}
            chatbotName={names?.get(t.chatbotId)}
            level={4}
            range={range}
            manage={manage}
          />
        ))}
      </ol>
    </section>
  )
}

function Figures({ figures }: { figures: TopicFigures }) {
  return (
    <dl className="topic-figures">
      <div>
        <dt>Conversations</dt>
        <dd>{formatNumber(figures.conversations)}</dd>
      </div>
      <div>
        <dt>Share</dt>
        <dd>{formatShare(figures.share)}</dd>
      </div>
      <div>
        <dt>End-user messages</dt>
        <dd>{formatNumber(figures.messages)}</dd>
      </div>
      <div>
        <dt>Average sentiment</dt>
        <dd>
          <SentimentBadge sentiment={sentimentOf(figures.averageSentiment)} />
          <span className="figure-note">
            {figures.averageSentiment === null ? 'nothing analysed yet' : SENTIMENT_SCALE}
          </span>
        </dd>
      </div>
    </dl>
  )
}

function TopicItem({
  topic: t,
  rank,
  chatbotName,
  level = 3,
  range,
  manage,
}: {
  topic: Topic
  rank: number
  chatbotName?: string
  /** The report's range: the link to the conversations covers it. */
  range: ReportRange
  /** Its heading's level: 4 under a theme's heading. */
  level?: 3 | 4
  /** Owners and admins only. */
  manage?: { topics: readonly Topic[]; onChanged: () => void }
}) {
  const Heading = level === 3 ? 'h3' : 'h4'
  const Sub = level === 3 ? 'h4' : 'h5'
  return (
    <li className="card topic-item">
      <div className="topic-head">
        <Heading>
          <span className="topic-rank">{rank}.</span> {t.label}
        </Heading>
        {t.configured ? <span className="badge topic-configured">Your topic</span> : null}
        {chatbotName ? <span className="muted">{chatbotName}</span> : null}
      </div>
      {t.keywords.length > 0 ? (
        <p className="topic-keywords">
          <span className="visually-hidden">Keywords: </span>
          {t.keywords.join(' · ')}
        </p>
      ) : null}
      <Figures figures={t} />
      {t.examples.length > 0 ? (
        <>
          <Sub>Examples</Sub>
          <ul className="topic-examples">
            {t.examples.map((e) => (
              <li key={e.id}>
                <div className="example-meta">
                  <Link to={paths.conversation(e.id)}>{e.conversationId}</Link>
                  <SentimentLabelBadge label={e.sentiment} />
                  <time dateTime={e.lastMessageAt} className="muted">
                    {formatDateTime(e.lastMessageAt)}
                  </time>
                </div>
                {e.excerpt ? <q className="example-excerpt">{e.excerpt}</q> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <p className="topic-link">
        <Link to={paths.topicConversations(t.id, t.chatbotId, range)}>Conversations about {t.label}</Link>
      </p>
      {manage ? <ManageTopic topic={t} topics={manage.topics} onChanged={manage.onChanged} /> : null}
    </li>
  )
}

function OtherItem({
  other,
  chatbotId,
  range,
}: {
  other: TopicFigures
  chatbotId?: string
  range: ReportRange
}) {
  return (
    <section className="card topic-item topic-other" aria-labelledby="other-heading">
      <h2 id="other-heading">{OTHER_TOPIC_LABEL}</h2>
      <p className="muted">
        End users' messages no topic is close enough to yet: the long tail. A new topic forms from them once
        several end users ask about the same thing.
      </p>
      <Figures figures={other} />
      <p className="topic-link">
        <Link to={paths.topicConversations(OTHER_TOPIC_ID, chatbotId, range)}>Conversations in no topic</Link>
      </p>
    </section>
  )
}
