import type { ChartConfiguration } from 'chart.js'
import type { ReactNode } from 'react'
import type { SignalsReport } from '../api/types.ts'
import { bucketLabel, COLORS, LINE_DASHES, SERIES_COLORS } from '../lib/chart-data.ts'
import { formatDateTime, formatNumber } from '../lib/format.ts'
import { Link } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'
import {
  abandonmentPendingText,
  checkedShare,
  exampleLinkText,
  failuresOf,
  SIGNAL_MEANINGS,
  SIGNAL_NAMES,
  signalName,
} from '../lib/signals.ts'
import { ChartFigure } from './chart.tsx'

const GAPS = ['bot_failure', 'escalation', 'repetition', 'frustration', 'abandonment'] as const

type SignalFigures = SignalsReport['signals'][number]

/**
 * A signal's share as the page says it: off (not counted), or its rate with, when fewer conversations
 * were checked for it than are in range (added or turned on later), over how many.
 */
function share(s: SignalFigures, conversations: number, chatbotId: string | undefined): string {
  if (!s.enabled) return chatbotId ? 'Off for this chatbot' : 'Off for every chatbot'
  return checkedShare(s.rate, s.conversationsChecked, conversations)
}

/**
 * The range's conversations whose abandonment is still to be decided (their chatbot's quiet period not
 * over since their last message), as the Topics page says topics are settling: the abandonment count may
 * still rise after the status reads up to date (trial7). Nothing when none waits.
 */
function AbandonmentPending({ report, live }: { report: SignalsReport; live?: boolean }) {
  const text = abandonmentPendingText(report.abandonmentPending, formatDateTime)
  if (text === null) return null
  // A live region once on the page (the Signals section's): Needs attention says the same again.
  return live ? (
    <p className="muted abandonment-pending" role="status">
      {text}
    </p>
  ) : (
    <p className="muted abandonment-pending">{text}</p>
  )
}

/** The Signals section of the Analytics page: rates by signal, their trend, and the knowledge gaps per topic. */
export function SignalsSection({ report, chatbotId }: { report: SignalsReport; chatbotId?: string }) {
  const off = new Set(report.signals.filter((s) => !s.enabled).map((s) => s.name))
  const partial = report.signals.some((s) => !s.enabled || s.conversationsChecked < report.conversations)
  const rates: ChartConfiguration = {
    type: 'bar',
    data: {
      labels: report.signals.map((s) => (s.enabled ? signalName(s) : `${signalName(s)} (off)`)),
      datasets: [
        {
          label: 'Share of conversations (%)',
          data: report.signals.map((s) => (s.enabled ? Math.round(s.rate * 1000) / 10 : null)),
          backgroundColor: COLORS.primary,
        },
      ],
    },
    options: {
      indexAxis: 'y',
      plugins: { legend: { display: false } },
      scales: { x: { beginAtZero: true, title: { display: true, text: '% of conversations' } } },
    },
  }
  const labels = report.buckets.map((b) => bucketLabel(b.bucket, report.interval))
  const trend: ChartConfiguration = {
    type: 'line',
    data: {
      labels,
      // Every signal the rates chart shows, a chatbot's own ones included, named as there (by label).
      datasets: report.signals
        .flatMap((s, i) => (s.enabled ? [{ s, i }] : []))
        .map(({ s, i }) => ({
          label: signalName(s),
          data: s.trend.map((p) => Math.round(p.rate * 1000) / 10),
          borderColor: SERIES_COLORS[i % SERIES_COLORS.length],
          backgroundColor: SERIES_COLORS[i % SERIES_COLORS.length],
          borderDash: [...LINE_DASHES[i % LINE_DASHES.length]!],
        })),
    },
    options: {
      // The legend draws each line as it is drawn, dashes included.
      plugins: { legend: { labels: { usePointStyle: true, pointStyle: 'line' } } },
      scales: { y: { beginAtZero: true, title: { display: true, text: '% of conversations' } } },
    },
  }
  const summary = `${formatNumber(report.conversations)} conversations: ${report.signals
    .map((s) => `${signalName(s)} ${share(s, report.conversations, chatbotId).toLowerCase()}`)
    .join(', ')}.`
  return (
    <section aria-labelledby="signals-heading" className="signals-section">
      <h2 id="signals-heading">Signals</h2>
      {report.conversations === 0 ? (
        <p className="empty">No conversation has its last message in this range yet.</p>
      ) : (
        <p className="muted">
          Of the {formatNumber(report.conversations)} conversations whose last message is in range, those
          where the bot let the end user down, and those it resolved.
          {partial
            ? ' A signal turned off is not counted; one added or turned on later is rated over the conversations checked for it (analysed since, or re-analysed).'
            : ''}
        </p>
      )}
      <AbandonmentPending report={report} live />
      {report.conversations > 0 && (
        <div className="chart-grid">
          <ChartFigure
            id="signal-rates"
            title="Conversations by signal"
            summary={summary}
            config={rates}
            table={{
              columns: ['Signal', 'Conversations', 'Share', 'Meaning'],
              rows: report.signals.map((s) => ({
                key: s.name,
                cells: [
                  signalName(s),
                  s.enabled ? s.conversations : '—',
                  share(s, report.conversations, chatbotId),
                  SIGNAL_MEANINGS[s.name] ?? s.label ?? '',
                ],
                to: paths.filteredConversations({ chatbotId, signal: s.name }, report.range),
              })),
            }}
          />
          <ChartFigure
            id="signal-trend"
            title={`Signals by ${report.interval}`}
            summary={summary}
            config={trend}
            table={{
              columns: ['Period', 'Conversations', ...report.signals.map((s) => signalName(s))],
              rows: report.buckets.map((b, i) => ({
                key: b.bucket,
                cells: [
                  labels[i]!,
                  b.conversations,
                  ...report.signals.map((s) => (s.enabled ? (s.trend[i]?.conversations ?? 0) : '—')),
                ],
              })),
            }}
          />
        </div>
      )}
      <section aria-labelledby="gaps-heading" className="card">
        <h3 id="gaps-heading">Knowledge gaps by topic</h3>
        {report.topics.length === 0 ? (
          <p className="empty">No topics in this range yet.</p>
        ) : (
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard.
          <section className="table-scroll" tabIndex={0} aria-label="Knowledge gaps by topic (table)">
            <table>
              <thead>
                <tr>
                  <th scope="col">Topic</th>
                  <th scope="col">Conversations</th>
                  {GAPS.map((g) => (
                    <th key={g} scope="col">
                      {SIGNAL_NAMES[g]}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {report.topics.map((t) => (
                  <tr key={t.id}>
                    <th scope="row">
                      <Link to={paths.topicConversations(t.id, chatbotId, report.range)}>{t.label}</Link>
                    </th>
                    <td>{formatNumber(t.conversations)}</td>
                    {GAPS.map((g) => (
                      <td key={g}>
                        {off.has(g)
                          ? 'Off'
                          : checkedShare(
                              t.signals[g]?.rate ?? 0,
                              t.signals[g]?.conversationsChecked ?? t.conversations,
                              t.conversations,
                            )}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        )}
      </section>
    </section>
  )
}

/** The topics whose users the bot fails most, with example conversations and the filtered list. */
export function NeedsAttention({
  report,
  chatbotId,
  notice,
}: {
  report: SignalsReport
  chatbotId?: string
  /** Said before the ranking (the language notice: its signals are unreliable then). */
  notice?: ReactNode
}) {
  const botFailureOff = report.signals.some((s) => s.name === 'bot_failure' && !s.enabled)
  return (
    <section aria-labelledby="attention-heading" className="card needs-attention" id="needs-attention">
      <h2 id="attention-heading">Needs attention</h2>
      {notice}
      <p className="muted">
        Topics ranked by how often the bot fails their users (the lower bound of the bot-failure rate's 95 %
        interval, so that one failure in one conversation does not come first).
      </p>
      <AbandonmentPending report={report} />
      {botFailureOff ? (
        // Nothing is checked for bot failure: "No bot failure" would read as a bot that failed no one.
        <p className="empty">
          Bot failure is off for {chatbotId ? 'this chatbot' : 'every chatbot'}: no conversation is checked
          for it, so no topic is ranked here.
        </p>
      ) : report.needsAttention.length === 0 ? (
        <p className="empty">No bot failure in this range.</p>
      ) : (
        <ol className="attention-list">
          {report.needsAttention.map((t) => (
            <li key={t.id}>
              <Link
                to={paths.filteredConversations(
                  { chatbotId, topic: t.id, signal: 'bot_failure' },
                  report.range,
                )}
              >
                <strong>{t.label}</strong>
              </Link>
              : {failuresOf(t)}.{' '}
              {t.exampleConversations.length > 0 ? (
                <ul className="attention-examples" aria-label={`Examples of ${t.label}`}>
                  {t.exampleConversations.map((e) => (
                    <li key={e.id}>
                      <Link to={paths.conversation(e.id)}>{exampleLinkText(e, formatDateTime)}</Link>
                    </li>
                  ))}
                </ul>
              ) : null}
            </li>
          ))}
        </ol>
      )}
    </section>
  )
}
