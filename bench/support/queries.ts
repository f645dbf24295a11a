import { createPool, ensureReaderLogin } from '@cas/db'
import { seedReadModels } from './analytics-seed.ts'
import { buildDashboardApp, createChatbotInProcess, signUpInProcess } from './in-process.ts'
import { type Latency, msSince, summarize, timed } from './stats.ts'

export interface QueryTiming {
  readonly label: string
  readonly url: string
  /**
   * What the latency target applies to (overview, sentiment trend), if any. `past-overview`: an
   * overview of a range that ended long ago, reported beside the target (the dashboard's ranges end now;
   * bench/README.md says what such a range costs).
   */
  readonly kind: 'overview' | 'sentiment' | 'past-overview' | 'conversations'
  readonly latency: Latency
}

export interface QueryScale {
  readonly messages: number
  readonly seedSeconds: number
  readonly queries: QueryTiming[]
}

const CHATBOTS = 10
const NOW = new Date('2026-11-21T12:00:00Z')

/**
 * Dashboard read latency over read models holding each of `scales` messages (one organization, 10
 * chatbots, a year of traffic): the analytics overview and sentiment trend, and the conversation list,
 * through the real routes (session, row-level security), in this process (app.inject: no network hop).
 * `databaseUrl` is a migrated, empty database of its own.
 */
export async function measureQueries(opts: {
  databaseUrl: string
  scales: readonly number[]
  runs: number
  log?: (line: string) => void
}): Promise<QueryScale[]> {
  const pool = createPool(opts.databaseUrl, { max: 10 })
  const readerPool = createPool(await ensureReaderLogin(opts.databaseUrl), { max: 10 })
  const app = await buildDashboardApp({ pool, readerPool, databaseUrl: opts.databaseUrl, now: () => NOW })
  try {
    const { cookie, orgId } = await signUpInProcess(app)
    const chatbotIds: string[] = []
    for (let i = 0; i < CHATBOTS; i++)
      chatbotIds.push((await createChatbotInProcess(app, cookie, `bot ${i}`)).id)
    const get = async (url: string) => {
      const res = await app.inject({ method: 'GET', url, headers: { cookie } })
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
      return res
    }
    const results: QueryScale[] = []
    for (const messages of opts.scales) {
      const seedSeconds = await timed(() => seedReadModels(pool, { orgId, chatbotIds, messages, now: NOW }))
      opts.log?.(`  ${messages.toLocaleString('en')} messages seeded in ${seedSeconds.toFixed(0)} s`)
      const firstPage = (await get('/api/v1/conversations?limit=20')).json() as { nextCursor: string | null }
      const queries: [QueryTiming['kind'], string, string][] = [
        ['overview', 'overview, 30 days', '/api/v1/analytics/overview?days=30'],
        ['overview', 'overview, 365 days', '/api/v1/analytics/overview?days=365'],
        [
          'overview',
          'overview, 30 days, one chatbot',
          `/api/v1/analytics/overview?days=30&chatbotId=${chatbotIds[0]}`,
        ],
        [
          'overview',
          'overview, 365 days, one chatbot',
          `/api/v1/analytics/overview?days=365&chatbotId=${chatbotIds[0]}`,
        ],
        [
          'past-overview',
          'overview, 90 days in the past',
          '/api/v1/analytics/overview?from=2026-05-25T12:00:00Z&to=2026-08-23T12:00:00Z',
        ],
        ['sentiment', 'sentiment by day, 30 days', '/api/v1/analytics/sentiment?days=30'],
        ['sentiment', 'sentiment by day, 365 days', '/api/v1/analytics/sentiment?days=365'],
        [
          'sentiment',
          'sentiment by week, 365 days, Europe/Berlin',
          '/api/v1/analytics/sentiment?days=365&interval=week&tz=Europe/Berlin',
        ],
        [
          'sentiment',
          'sentiment by day, 365 days, one chatbot',
          `/api/v1/analytics/sentiment?days=365&chatbotId=${chatbotIds[0]}`,
        ],
        ['conversations', 'conversation list, first page of 20', '/api/v1/conversations?limit=20'],
        [
          'conversations',
          'conversation list, next page',
          `/api/v1/conversations?limit=20&cursor=${firstPage.nextCursor ?? ''}`,
        ],
        [
          'conversations',
          'conversation list, one chatbot',
          `/api/v1/conversations?limit=20&chatbotId=${chatbotIds[0]}`,
        ],
        [
          'conversations',
          'conversation list, negative sentiment',
          '/api/v1/conversations?limit=20&sentiment=negative',
        ],
        ['conversations', 'conversation list, topic "login"', '/api/v1/conversations?limit=20&topic=login'],
      ]
      const timings: QueryTiming[] = []
      for (const [kind, label, url] of queries) {
        const ms: number[] = []
        // Two untimed runs first: plans and caches warm, as on a dashboard in use.
        for (let i = 0; i < opts.runs + 2; i++) {
          const start = process.hrtime.bigint()
          await get(url)
          if (i >= 2) ms.push(msSince(start))
        }
        timings.push({ label, url, kind, latency: summarize(ms) })
        const l = summarize(ms)
        opts.log?.(
          `    ${label.padEnd(46)} p50 ${l.p50.toFixed(1).padStart(7)} ms   p95 ${l.p95.toFixed(1).padStart(7)} ms   max ${l.max.toFixed(1).padStart(7)} ms`,
        )
      }
      results.push({ messages, seedSeconds, queries: timings })
    }
    return results
  } finally {
    await app.close()
    await readerPool.end()
    await pool.end()
  }
}
