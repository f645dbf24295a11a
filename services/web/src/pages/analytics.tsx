import type { ChartConfiguration } from 'chart.js'
import { useMemo } from 'react'
import { analytics } from '../api/endpoints.ts'
import type { Overview, SentimentTrend } from '../api/types.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { ChartFigure } from '../components/chart.tsx'
import { Freshness } from '../components/freshness.tsx'
import { LanguageNotice } from '../components/language-notice.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import { RangeForm } from '../components/range-form.tsx'
import { AverageSentiment } from '../components/sentiment-badge.tsx'
import { NeedsAttention, SignalsSection } from '../components/signal-sections.tsx'
import {
  analyticsQuery,
  selectionFromSearch,
  selectionToSearch,
  viewerTimeZone,
} from '../lib/analytics-range.ts'
import {
  assistantSentimentLine,
  bucketLabel,
  COLORS,
  roleCounts,
  rolesSummary,
  topicBars,
  topicsSummary,
  trendSummary,
} from '../lib/chart-data.ts'
import { formatAverageSentiment, formatDateTime, formatNumber } from '../lib/format.ts'
import { Link, useRouter } from '../lib/router.tsx'
import { paths, type ReportRange } from '../lib/routes.ts'
import { useChatbotList } from '../lib/use-chatbots.ts'
import { usePolled } from '../lib/use-poll.ts'

const POLL_MS = 15_000

export function AnalyticsPage() {
  const { location, navigate } = useRouter()
  const selection = useMemo(() => selectionFromSearch(location.search), [location.search])

  const tz = viewerTimeZone()
  const query = analyticsQuery(selection, tz)
  const key = JSON.stringify(query)
  const bots = useChatbotList()
  const overview = usePolled((signal) => analytics.overview(query, signal), key, POLL_MS)
  const scope = selection.chatbotId ? 'this chatbot' : 'these chatbots'
  const trend = usePolled(
    (signal) => analytics.sentiment({ ...query, interval: selection.interval }, signal),
    `${key}|${selection.interval}`,
    POLL_MS,
  )

  const signals = usePolled(
    (signal) => analytics.signals({ ...query, interval: selection.interval }, signal),
    `${key}|${selection.interval}|signals`,
    POLL_MS,
  )

  return (
    <section className="page">
      <PageHeading title="Analytics" />
      <Freshness />
      <RangeForm
        idPrefix="a"
        selection={selection}
        chatbots={bots.allowed ? (bots.data ?? []) : null}
        onApply={(s) => navigate(`${paths.analytics()}?${selectionToSearch(s)}`)}
      />
      <ErrorAlert error={overview.error ?? trend.error ?? signals.error} />
      <LanguageNotice languages={overview.data?.languages} scope={scope} />
      {overview.data ? <Figures overview={overview.data} tz={tz} /> : <p role="status">Loading figures…</p>}
      <div className="chart-grid">
        {trend.data ? <TrendCharts trend={trend.data} /> : null}
        {overview.data ? (
          <OverviewCharts overview={overview.data} chatbotId={selection.chatbotId || undefined} />
        ) : null}
      </div>
      {signals.data ? (
        <>
          <NeedsAttention
            report={signals.data}
            chatbotId={selection.chatbotId || undefined}
            notice={<LanguageNotice languages={overview.data?.languages} scope={scope} />}
          />
          <SignalsSection report={signals.data} chatbotId={selection.chatbotId || undefined} />
        </>
      ) : null}
    </section>
  )
}

function Figures({ overview: o, tz }: { overview: Overview; tz: string }) {
  const s = o.sentiment
  return (
    <section aria-labelledby="figures-heading">
      <h2 id="figures-heading">Overview</h2>
      <p className="muted">
        {formatDateTime(o.range.from)} to {formatDateTime(o.range.to)} ({tz}). Updates by itself.
      </p>
      <dl className="figures card">
        <Figure label="Conversations" value={formatNumber(o.totalConversations)} />
        <Figure label="Messages" value={formatNumber(o.totalMessages)} />
        <Figure label="End users" value={formatNumber(o.uniqueUsers)} />
        <Figure label="Messages per conversation" value={formatNumber(o.avgMessagesPerConversation)} />
        <div>
          <dt>End users' sentiment</dt>
          <dd>
            <AverageSentiment average={s.average} />
          </dd>
        </div>
        <Figure
          label="Analysed end-user messages"
          value={`${formatNumber(s.analyzed)}`}
          note={`${formatNumber(s.positive)} positive, ${formatNumber(s.neutral)} neutral, ${formatNumber(s.negative)} negative`}
        />
      </dl>
      <p className="muted assistant-sentiment">{assistantSentimentLine(o.assistantSentiment)}</p>
    </section>
  )
}

function Figure({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>
        {value}
        {note ? <span className="figure-note">{note}</span> : null}
      </dd>
    </div>
  )
}

function TrendCharts({ trend }: { trend: SentimentTrend }) {
  const labels = trend.points.map((p) => bucketLabel(p.bucket, trend.interval))
  const summary = trendSummary(trend.points)
  const average: ChartConfiguration = {
    type: 'line',
    data: {
      labels,
      datasets: [
        {
          label: 'Average sentiment',
          data: trend.points.map((p) => p.average),
          borderColor: COLORS.primary,
          backgroundColor: COLORS.primary,
          spanGaps: true,
        },
      ],
    },
    options: {
      scales: {
        y: { min: -1, max: 1, title: { display: true, text: 'score (\u22121 negative to +1 positive)' } },
      },
    },
  }
  const labelCounts: ChartConfiguration = {
    type: 'bar',
    data: {
      labels,
      datasets: (['positive', 'neutral', 'negative'] as const).map((label) => ({
        label: label[0]!.toUpperCase() + label.slice(1),
        data: trend.points.map((p) => p[label]),
        backgroundColor: COLORS[label],
      })),
    },
    options: {
      scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
    },
  }
  const rows = trend.points.map((p, i) => ({
    key: p.bucket,
    cells: [labels[i]!, formatAverageSentiment(p.average), p.positive, p.neutral, p.negative],
  }))
  const columns = ['Period', 'Average (\u22121 to +1)', 'Positive', 'Neutral', 'Negative']
  return (
    <>
      <ChartFigure
        id="trend-average"
        title={`Sentiment trend by ${trend.interval} (end users)`}
        summary={summary}
        config={average}
        table={{ columns, rows }}
      />
      <ChartFigure
        id="trend-labels"
        title="Analysed end-user messages by sentiment"
        summary={summary}
        config={labelCounts}
        table={{ columns, rows }}
      />
    </>
  )
}

function OverviewCharts({ overview, chatbotId }: { overview: Overview; chatbotId?: string }) {
  // The top topics by conversations, then Other (the long tail) last, as on the Topics page.
  const topics = topicBars(overview)
  const roles = roleCounts(overview.messagesByRole)
  const topicChart: ChartConfiguration = {
    type: 'bar',
    data: {
      labels: topics.map((t) => t.topic),
      datasets: [
        { label: 'Conversations', data: topics.map((t) => t.count), backgroundColor: COLORS.primary },
      ],
    },
    options: {
      indexAxis: 'y',
      plugins: { legend: { display: false } },
      scales: { x: { beginAtZero: true, ticks: { precision: 0 } } },
    },
  }
  const roleChart: ChartConfiguration = {
    type: 'bar',
    data: {
      labels: roles.map((r) => r.role),
      datasets: [{ label: 'Messages', data: roles.map((r) => r.count), backgroundColor: COLORS.neutral }],
    },
    options: {
      plugins: { legend: { display: false } },
      scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
    },
  }
  return (
    <>
      <ChartFigure
        id="topics"
        title="Top topics"
        summary={topicsSummary(overview.topTopics, overview.otherTopic)}
        config={topicChart}
        table={{
          columns: ['Topic', 'Conversations'],
          rows: topics.map((t) => ({
            key: t.id,
            cells: [t.topic, t.count],
            to: paths.topicConversations(t.id, chatbotId, overview.range),
          })),
        }}
        empty={topics.length === 0 ? <p className="empty">No topics in this range yet.</p> : undefined}
        footer={<TopTopicLinks topics={topics} chatbotId={chatbotId} range={overview.range} />}
      />
      <ChartFigure
        id="roles"
        title="Messages by role"
        summary={rolesSummary(roles)}
        config={roleChart}
        table={{
          columns: ['Role', 'Messages'],
          rows: roles.map((r) => ({ key: r.role, cells: [r.role, r.count] })),
        }}
      />
    </>
  )
}

/** The top topics as links to their conversations, and to the Topics page for more about each. */
function TopTopicLinks({
  topics,
  chatbotId,
  range,
}: {
  topics: Overview['topTopics']
  chatbotId?: string
  range: ReportRange
}) {
  return (
    <nav aria-label="Conversations by topic" className="topic-links">
      {topics.length > 0 ? (
        <ul className="chips">
          {topics.map((t) => (
            <li key={t.id}>
              <Link className="chip" to={paths.topicConversations(t.id, chatbotId, range)}>
                {t.topic}
              </Link>
            </li>
          ))}
        </ul>
      ) : null}
      <p>
        <Link to={paths.topics(chatbotId ? new URLSearchParams({ chatbotId }) : undefined)}>
          All topics, with their trend, sentiment and examples
        </Link>
      </p>
    </nav>
  )
}
