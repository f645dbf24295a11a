import type { ChartConfiguration } from 'chart.js'
import type { TopicsReport } from '../api/types.ts'
import { COLORS, SERIES_COLORS } from '../lib/chart-data.ts'
import { paths } from '../lib/routes.ts'
import {
  chartLabel,
  OTHER_TOPIC_ID,
  OTHER_TOPIC_LABEL,
  RANKING_COLUMNS,
  rankingRows,
  rankingSummary,
  topicName,
  trendChartSummary,
  trendRows,
  trendSeries,
} from '../lib/topics.ts'
import { ChartFigure } from './chart.tsx'

/** Bars in the ranking chart; the table below it has every topic shown. */
const CHART_TOPICS = 10

/** The Topics page's ranking: conversations per topic, "other" last, each row linking to its conversations. */
export function RankingChart({
  report,
  names,
  chatbotId,
}: {
  report: TopicsReport
  names?: Map<string, string>
  chatbotId?: string
}) {
  const charted = report.topics.slice(0, CHART_TOPICS)
  const bars = [
    ...charted.map((t) => ({
      name: topicName(t, names),
      conversations: t.conversations,
      color: COLORS.primary,
    })),
    ...(report.other
      ? [{ name: OTHER_TOPIC_LABEL, conversations: report.other.conversations, color: COLORS.neutral }]
      : []),
  ]
  const config: ChartConfiguration = {
    type: 'bar',
    data: {
      labels: bars.map((b) => chartLabel(b.name)),
      datasets: [
        {
          label: 'Conversations',
          data: bars.map((b) => b.conversations),
          backgroundColor: bars.map((b) => b.color),
        },
      ],
    },
    options: {
      indexAxis: 'y',
      plugins: { legend: { display: false } },
      scales: { x: { beginAtZero: true, ticks: { precision: 0 } } },
    },
  }
  const byId = new Map(report.topics.map((t) => [t.id, t]))
  const rows = rankingRows(report, names).map((row) => ({
    ...row,
    to: paths.topicConversations(row.key, byId.get(row.key)?.chatbotId ?? chatbotId, report.range),
  }))
  return (
    <ChartFigure
      id="topic-ranking"
      title="Conversations by topic"
      summary={rankingSummary(report, names)}
      config={config}
      table={{ columns: RANKING_COLUMNS, rows }}
    />
  )
}

/** The top topics' (and "other"'s) end-user messages per bucket, lines told apart by dash as well as colour. */
export function TrendChart({ report, names }: { report: TopicsReport; names?: Map<string, string> }) {
  const { buckets, series } = trendSeries(report, names)
  const table = trendRows(buckets, series, report.interval)
  const config: ChartConfiguration = {
    type: 'line',
    data: {
      labels: table.rows.map((r) => r.cells[0] as string),
      datasets: series.map((s, i) => {
        const color = s.key === OTHER_TOPIC_ID ? COLORS.neutral : SERIES_COLORS[i % SERIES_COLORS.length]!
        return {
          label: chartLabel(s.name),
          data: s.messages,
          borderColor: color,
          backgroundColor: color,
          // Lines differ by dash as well as colour: the colour is never the only way to tell them apart.
          borderDash: s.key === OTHER_TOPIC_ID ? [2, 3] : i === 0 ? [] : [8 - i, 3],
        }
      }),
    },
    options: {
      // The legend draws each line as it is drawn, dashes included.
      plugins: { legend: { labels: { usePointStyle: true, pointStyle: 'line' } } },
      scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
    },
  }
  return (
    <ChartFigure
      id="topic-trend"
      title={`Top topics by ${report.interval}`}
      summary={trendChartSummary(buckets, series, report.interval)}
      config={config}
      table={table}
    />
  )
}
