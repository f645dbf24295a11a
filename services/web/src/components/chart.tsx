import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js'
import { type ReactNode, useEffect, useRef } from 'react'
import { keyed } from '../lib/chart-data.ts'
import { Link } from '../lib/router.tsx'

// Only the pieces the dashboard draws with, so the bundle carries nothing else of Chart.js.
Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  Legend,
)
Chart.defaults.animation = false
Chart.defaults.color = '#374151'
Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif'
Chart.defaults.maintainAspectRatio = false
Chart.defaults.datasets.bar.maxBarThickness = 48

export interface TableData {
  readonly columns: readonly string[]
  /**
   * Each row's cells, the first of which names the row; `key` identifies it, and `to` is a page about it
   * (the first cell links there).
   */
  readonly rows: readonly {
    readonly key: string
    readonly cells: readonly (string | number)[]
    readonly to?: string
  }[]
}

/**
 * A Chart.js chart with what a canvas lacks: a caption, a text summary for screen readers, and the same
 * numbers as a table. The chart is made once and updated in place as new data polls in.
 */
export function ChartFigure({
  id,
  title,
  summary,
  config,
  table,
  empty,
  footer,
}: {
  id: string
  title: string
  summary: string
  config: ChartConfiguration
  table: TableData
  empty?: ReactNode
  /** Shown under the chart, above the table (links to what the chart counts). */
  footer?: ReactNode
}) {
  const canvas = useRef<HTMLCanvasElement>(null)
  const chart = useRef<Chart | null>(null)
  const chartType = useRef<string | null>(null)

  useEffect(() => {
    if (!canvas.current) return
    if (!chart.current || chartType.current !== config.type) {
      chart.current?.destroy()
      chart.current = new Chart(canvas.current, config)
      chartType.current = config.type
      return
    }
    chart.current.data = config.data
    chart.current.options = config.options ?? {}
    chart.current.update()
  }, [config])

  useEffect(
    () => () => {
      chart.current?.destroy()
      chart.current = null
    },
    [],
  )

  return (
    <figure className="card chart-card" aria-labelledby={`${id}-title`}>
      <figcaption id={`${id}-title`}>
        <h3>{title}</h3>
      </figcaption>
      {empty ?? null}
      <div className="chart-box" hidden={Boolean(empty)}>
        <canvas ref={canvas} role="img" aria-label={`${title}. ${summary}`}>
          {summary}
        </canvas>
      </div>
      {footer ?? null}
      <details>
        <summary>Show the numbers as a table</summary>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard. */}
        <section className="table-scroll" tabIndex={0} aria-label={`${title} (table)`}>
          <table>
            <caption className="visually-hidden">{title}</caption>
            <thead>
              <tr>
                {keyed(table.columns, table.columns).map(({ value: c, key }) => (
                  <th key={key} scope="col">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {table.rows.map((row) => (
                <tr key={row.key}>
                  {keyed(table.columns, row.cells).map(({ value: cell, key, first }) =>
                    first ? (
                      <th key={key} scope="row">
                        {row.to ? <Link to={row.to}>{cell}</Link> : cell}
                      </th>
                    ) : (
                      <td key={key}>{cell}</td>
                    ),
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      </details>
    </figure>
  )
}
