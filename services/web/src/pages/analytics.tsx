import type { ChartConfiguration } from 'chart.js'
import { type FormEvent, useEffect, useMemo, useState } from 'react'
import { analytics } from '../api/endpoints.ts'
import type { Overview, SentimentTrend } from '../api/types.ts'
import { ErrorAlert } from '../components/alert.tsx'
import { ChartFigure } from '../components/chart.tsx'
import { PageHeading } from '../components/page-heading.tsx'
import {
  type AnalyticsSelection,
  analyticsQuery,
  intervalsFor,
  PRESETS,
  selectionFromSearch,
  selectionProblem,
  selectionToSearch,
  viewerTimeZone,
} from '../lib/analytics-range.ts'
import {
  bucketLabel,
  COLORS,
  roleCounts,
  rolesSummary,
  topicsSummary,
  trendSummary,
} from '../lib/chart-data.ts'
import { formatDateTime, formatNumber, formatScore } from '../lib/format.ts'
import { useRouter } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import { useChatbotList } from '../lib/use-chatbots.ts'
import { usePolled } from '../lib/use-poll.ts'

const POLL_MS = 15_000
const INTERVAL_NAMES = { hour: 'Hour', day: 'Day', week: 'Week' } as const

export function AnalyticsPage() {
  const { location, navigate } = useRouter()
  const selection = useMemo(() => selectionFromSearch(location.search), [location.search])
  const [draft, setDraft] = useState(selection)
  const [problem, setProblem] = useState<string>()
  useEffect(() => setDraft(selection), [selection])

  const tz = viewerTimeZone()
  const query = analyticsQuery(selection, tz)
  const key = JSON.stringify(query)
  const bots = useChatbotList()
  const overview = usePolled((signal) => analytics.overview(query, signal), key, POLL_MS)
  const trend = usePolled(
    (signal) => analytics.sentiment({ ...query, interval: selection.interval }, signal),
    `${key}|${selection.interval}`,
    POLL_MS,
  )

  const apply = (event: FormEvent) => {
    event.preventDefault()
    const found = selectionProblem(draft)
    setProblem(found)
    if (found) return
    const interval = intervalsFor(draft).includes(draft.interval) ? draft.interval : 'day'
    navigate(`${paths.analytics()}?${selectionToSearch({ ...draft, interval })}`)
  }

  return (
    <section className="page">
      <PageHeading title="Analytics" />
      <form onSubmit={apply} className="card filters" aria-label="Choose what to analyse">
        <div className="filter-grid">
          {bots.allowed ? (
            <div className="field">
              <label htmlFor="a-chatbot">Chatbot</label>
              <select
                id="a-chatbot"
                value={draft.chatbotId}
                onChange={(e) => setDraft({ ...draft, chatbotId: e.target.value })}
              >
                <option value="">All chatbots</option>
                {bots.data?.map((b) => (
                  <option key={b.id} value={b.id}>
                    {b.name}
                  </option>
                ))}
              </select>
            </div>
          ) : null}
          <div className="field">
            <label htmlFor="a-range">Range</label>
            <select
              id="a-range"
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
                <label htmlFor="a-from">First day</label>
                <input
                  id="a-from"
                  type="date"
                  value={draft.from}
                  onChange={(e) => setDraft({ ...draft, from: e.target.value })}
                />
              </div>
              <div className="field">
                <label htmlFor="a-to">Last day</label>
                <input
                  id="a-to"
                  type="date"
                  value={draft.to}
                  onChange={(e) => setDraft({ ...draft, to: e.target.value })}
                />
              </div>
            </>
          ) : null}
          <div className="field">
            <label htmlFor="a-interval">Trend by</label>
            <select
              id="a-interval"
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

      <ErrorAlert error={overview.error ?? trend.error} />
      {overview.data ? <Figures overview={overview.data} tz={tz} /> : <p role="status">Loading figures…</p>}
      <div className="chart-grid">
        {trend.data ? <TrendCharts trend={trend.data} /> : null}
        {overview.data ? <OverviewCharts overview={overview.data} /> : null}
      </div>
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
        <Figure label="Average sentiment" value={s.average === null ? '—' : formatScore(s.average)} />
        <Figure
          label="Analysed messages"
          value={`${formatNumber(s.analyzed)}`}
          note={`${formatNumber(s.positive)} positive, ${formatNumber(s.neutral)} neutral, ${formatNumber(s.negative)} negative`}
        />
      </dl>
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
    options: { scales: { y: { min: -1, max: 1, title: { display: true, text: 'score (−1 to 1)' } } } },
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
    cells: [labels[i]!, p.average === null ? '—' : formatScore(p.average), p.positive, p.neutral, p.negative],
  }))
  const columns = ['Period', 'Average', 'Positive', 'Neutral', 'Negative']
  return (
    <>
      <ChartFigure
        id="trend-average"
        title={`Sentiment trend by ${trend.interval}`}
        summary={summary}
        config={average}
        table={{ columns, rows }}
      />
      <ChartFigure
        id="trend-labels"
        title="Analysed messages by sentiment"
        summary={summary}
        config={labelCounts}
        table={{ columns, rows }}
      />
    </>
  )
}

function OverviewCharts({ overview }: { overview: Overview }) {
  const topics = overview.topTopics
  const roles = roleCounts(overview.messagesByRole)
  const topicChart: ChartConfiguration = {
    type: 'bar',
    data: {
      labels: topics.map((t) => t.topic),
      datasets: [{ label: 'Messages', data: topics.map((t) => t.count), backgroundColor: COLORS.primary }],
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
        summary={topicsSummary(topics)}
        config={topicChart}
        table={{
          columns: ['Topic', 'Messages'],
          rows: topics.map((t) => ({ key: t.topic, cells: [t.topic, t.count] })),
        }}
        empty={topics.length === 0 ? <p className="empty">No topics in this range yet.</p> : undefined}
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
