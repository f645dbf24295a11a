/**
 * Analysis quality, measured the way a support lead meets it: the CLINC150 test split (4,500 real user
 * queries to an assistant, 150 intents; ../shared/data/clinc150) captured through the real API of the
 * all-in-one service (`dist/all-in-one.js` on the embedded Postgres, analysing with the language model
 * from ../shared/models), each with a boilerplate assistant reply, and its topics read back through the API.
 *
 *   npm run bench:quality [-- --limit 4500 --concurrency 8 --threads 1 --analysis-concurrency 16 --seed 1
 *                              --out bench/QUALITY.md --skip-build]
 *
 * Prints the machine, then: NMI of the conversations' topics against the intents (the long tail, "other",
 * is one cluster of its own), the number of topics, coverage, the share of conversations whose topic is
 * made of the assistant's words, end-user messages analysed per second and the model's load time; and,
 * computed in the same run on the same queries, TF-IDF + k-means at the true number of intents (the
 * classic baseline) and the model's embeddings + k-means at the true number (what the embeddings can do
 * when told how many topics there are). Targets beside the figures (issue 15). The benchmark is only
 * measured: nothing in the service is tuned to it.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { withDatabase } from '@cas/db'
import pg from 'pg'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { enqueueReanalysis } from '../services/analysis/src/reanalyze.ts'
import { createTermExtractor } from '../services/analysis/src/topics/terms.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { dense, kmeans, tfidf } from './quality/kmeans.ts'
import { normalizedMutualInformation } from './quality/metrics.ts'
import { formatWritten } from './support/format.ts'
import { benchKeyring } from './support/keyring.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import { seededRandom } from './support/random.ts'
import { startBenchServers } from './support/servers.ts'
import { createAccount, DIST_ALL_IN_ONE, startService } from './support/service.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: {
    limit: { type: 'string', default: '4500' },
    concurrency: { type: 'string', default: '8' },
    threads: { type: 'string', default: '1' },
    /** ANALYSIS_CONCURRENCY of the service; its default when unset. */
    'analysis-concurrency': { type: 'string' },
    seed: { type: 'string', default: '1' },
    data: { type: 'string', default: path.join(ROOT, '../shared/data/clinc150/data_full.json') },
    out: { type: 'string', default: path.join(ROOT, 'bench/QUALITY.md') },
    'skip-build': { type: 'boolean', default: false },
  },
})

/** What bots say to everyone, whatever was asked: none of it may ever become a topic. */
const BOILERPLATE = [
  'I am sorry to hear that. Let me help you with that right away.',
  'Thanks for reaching out! Our account team will get back to you shortly.',
  'I understand. Let me check that for you, one moment please.',
]
const TARGETS = { nmi: 0.85, topicsPerIntent: 2, assistantTopics: 0, messagesPerSecond: 300 }

const limit = Number(values.limit)
const random = seededRandom(Number(values.seed))
const data = JSON.parse(readFileSync(values.data, 'utf8')) as { test: [string, string][] }
// In an order of arrival, not grouped by intent: a shuffle with the run's seed.
const queries = data.test
  .map((q) => ({ q, r: random() }))
  .sort((a, b) => a.r - b.r)
  .map(({ q }) => q)
  .slice(0, limit)
const intents = queries.map(([, intent]) => intent)
const intentCount = new Set(intents).size

const machine = await machineInfo()
console.log(machineLine(machine))
console.log(`${queries.length} queries of ${intentCount} intents (CLINC150 test split), seed ${values.seed}`)

if (!values['skip-build'] || !existsSync(DIST_ALL_IN_ONE)) {
  execFileSync(process.execPath, ['infra/build.mjs'], { cwd: ROOT, stdio: 'inherit' })
}
const servers = await startBenchServers({ name: 'quality' })
const report: string[] = []
try {
  const databaseUrl = withDatabase(servers.postgres.url, 'postgres')
  const service = await startService({
    databaseUrl,
    poolSize: 20,
    env: {
      ANALYSIS_MODEL_DIR: process.env.ANALYSIS_MODEL_DIR ?? TEST_MODEL_DIR,
      ANALYSIS_MODEL_HUB_URL: UNREACHABLE_HUB,
      ANALYSIS_THREADS: values.threads,
      ...(values['analysis-concurrency'] ? { ANALYSIS_CONCURRENCY: values['analysis-concurrency'] } : {}),
      DATA_DIR: path.join(servers.scratch, 'data'),
    },
  })
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 })
  try {
    type Readiness = {
      details?: { analyzer?: { state: string; name: string; version: string; loadMs?: number } }
    }
    const analyzerStatus = async () =>
      ((await (await fetch(`${service.url}/readyz`)).json()) as Readiness).details?.analyzer
    let analyzer = await analyzerStatus()
    for (let tries = 0; analyzer?.state === 'loading' && tries < 600; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      analyzer = await analyzerStatus()
    }
    if (analyzer?.state !== 'ready') {
      throw new Error(`the service is not analysing with the model: ${JSON.stringify(analyzer)}`)
    }
    const account = await createAccount(service.url, 'quality')
    // Captured first with analysis off, then analysed as a whole (a re-analysis: the same worker, jobs,
    // placement and events as after a capture), so that the analysis rate is its own, not capture's.
    const patched = await fetch(`${service.url}/api/v1/chatbots/${account.chatbotId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', cookie: account.cookie },
      body: JSON.stringify({ settings: { analysisEnabled: false } }),
    })
    if (!patched.ok) throw new Error(`turning analysis off answered ${patched.status}`)

    // Capture: one conversation per query, the end user's message and the bot's boilerplate.
    const captureStarted = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: Number(values.concurrency) }, async () => {
        for (let i = next++; i < queries.length; i = next++) {
          const res = await fetch(`${service.url}/api/v1/capture`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${account.apiKey}` },
            body: JSON.stringify({
              conversationId: `clinc-${i}`,
              messages: [
                { id: 'q', role: 'user', content: queries[i]![0] },
                { id: 'a', role: 'assistant', content: BOILERPLATE[i % BOILERPLATE.length] },
              ],
            }),
          })
          if (!res.ok) throw new Error(`capture answered ${res.status}: ${await res.text()}`)
        }
      }),
    )
    const captureSeconds = (performance.now() - captureStarted) / 1000
    const queued = await enqueueReanalysis(pool, benchKeyring, {
      chatbotId: account.chatbotId,
      analyzer: { name: analyzer!.name, version: analyzer!.version },
      now: new Date(),
    })
    if (queued.length !== queries.length) throw new Error(`${queued.length} captures queued for analysis`)
    const analysisStarted = performance.now()

    // Until every job is analysed and the read models have every event.
    const deadline = Date.now() + 30 * 60_000
    for (;;) {
      const { rows } = await pool.query<{ open: number; caught_up: boolean }>(
        `SELECT (SELECT count(*)::int FROM analysis_jobs WHERE status IN ('pending', 'running')) AS open,
                coalesce((SELECT min(last_offset) FROM consumer_checkpoints WHERE group_id = 'projector'), -1)
                  >= coalesce((SELECT max(position) FROM event_journal), 0) AS caught_up`,
      )
      if (rows[0]!.open === 0 && rows[0]!.caught_up) break
      if (Date.now() > deadline) throw new Error('analysis did not finish within 30 minutes')
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    const analysisSeconds = (performance.now() - analysisStarted) / 1000
    const { rows: window } = await pool.query<{ dead: number }>(
      "SELECT count(*) FILTER (WHERE status = 'dead')::int AS dead FROM analysis_jobs",
    )

    // The topics and each conversation's, read back through the API.
    const cookie = { cookie: account.cookie }
    const topicsRes = await fetch(
      `${service.url}/api/v1/analytics/topics?chatbotId=${account.chatbotId}&days=2&limit=1000`,
      { headers: cookie },
    )
    const topicsReport = (await topicsRes.json()) as {
      topics: { id: string; label: string; keywords: string[]; conversations: number }[]
      other: { conversations: number } | null
    }
    const topicById = new Map(topicsReport.topics.map((t) => [t.id, t]))
    const topicOf = new Map<string, string>()
    let cursor: string | null = null
    do {
      const res = await fetch(
        `${service.url}/api/v1/conversations?chatbotId=${account.chatbotId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        { headers: cookie },
      )
      const page = (await res.json()) as {
        conversations: { conversationId: string; topicIds: string[] }[]
        nextCursor: string | null
      }
      for (const c of page.conversations) topicOf.set(c.conversationId, c.topicIds[0] ?? 'other')
      cursor = page.nextCursor
    } while (cursor)

    const clusters = queries.map((_, i) => topicOf.get(`clinc-${i}`) ?? 'other')
    const covered = clusters.map((c, i) => [c, i] as const).filter(([c]) => c !== 'other')
    const nmi = normalizedMutualInformation(intents, clusters)
    const nmiCovered = normalizedMutualInformation(
      covered.map(([, i]) => intents[i]!),
      covered.map(([c]) => c),
    )
    const topicCount = new Set(covered.map(([c]) => c)).size
    const coverage = covered.length / queries.length
    // A topic made of the assistant's words: a term of its label or keywords (terms as topics are made
    // of: lemmas, and pairs of them) that the bot said and none of the end users whose conversations are
    // in the topic did.
    const extractor = createTermExtractor()
    const botTerms = new Set(BOILERPLATE.flatMap((text) => extractor.terms(text)))
    const memberTerms = new Map<string, Set<string>>()
    for (const [c, i] of covered) {
      const said = memberTerms.get(c) ?? new Set<string>()
      for (const t of extractor.terms(queries[i]![0])) said.add(t)
      memberTerms.set(c, said)
    }
    const botOnly = (c: string) => {
      const topic = topicById.get(c)
      const said = memberTerms.get(c)!
      return (topic?.keywords ?? []).filter((t) => botTerms.has(t) && !said.has(t))
    }
    const assistantTopics = new Set([...memberTerms.keys()].filter((c) => botOnly(c).length > 0))
    const fromAssistant = covered.filter(([c]) => assistantTopics.has(c)).length
    const assistantNamed = [...assistantTopics].map(
      (c) => `${topicById.get(c)?.label ?? c} (${botOnly(c).join(', ')})`,
    )
    const loadMs = analyzer.loadMs

    // The baselines, on the same queries, at the true number of intents.
    const texts = queries.map(([q]) => q)
    const tfidfNmi = normalizedMutualInformation(intents, kmeans(tfidf(texts), intentCount).map(String))
    const model = await createSemanticAnalyzer({
      modelDir: process.env.ANALYSIS_MODEL_DIR ?? TEST_MODEL_DIR,
      cacheDir: path.join(servers.scratch, 'models'),
      hubUrl: UNREACHABLE_HUB,
    })
    const embedStarted = performance.now()
    const embeddings = await model.semantic.embedTexts(texts)
    const embedPerSecond = texts.length / ((performance.now() - embedStarted) / 1000)
    const embeddingNmi = normalizedMutualInformation(
      intents,
      kmeans(dense(embeddings), intentCount, { restarts: 1 }).map(String),
    )

    const pct = (x: number) => `${(x * 100).toFixed(1)} %`
    const meets = (ok: boolean) => (ok ? '**met**' : '**missed**')
    const perSecond = queries.length / analysisSeconds
    const rows = [
      [
        'NMI against the intents ("other" one cluster)',
        nmi.toFixed(3),
        `≥ ${TARGETS.nmi}`,
        meets(nmi >= TARGETS.nmi),
      ],
      ['NMI of the conversations with a topic', nmiCovered.toFixed(3), '', ''],
      [
        'topics',
        `${topicCount} (${topicsReport.topics.length} listed)`,
        `≤ ${TARGETS.topicsPerIntent * intentCount}, not told ${intentCount}`,
        meets(topicCount <= TARGETS.topicsPerIntent * intentCount),
      ],
      ['coverage (conversations with a topic other than "other")', pct(coverage), '', ''],
      [
        "conversations whose topic is the assistant's words",
        pct(fromAssistant / covered.length),
        '0 %',
        meets(fromAssistant === 0),
      ],
      [
        'end-user messages analysed per second (jobs to topics in the read models, whole pipeline)',
        perSecond.toFixed(0),
        `≥ ${TARGETS.messagesPerSecond}`,
        meets(perSecond >= TARGETS.messagesPerSecond),
      ],
      ['the model alone, one thread, embeddings per second', embedPerSecond.toFixed(0), '', ''],
      ['model load time (service, per analyzer thread)', `${loadMs ?? '?'} ms`, '', ''],
      ['capture of the queries, requests per second', (queries.length / captureSeconds).toFixed(0), '', ''],
      [`baseline: TF-IDF + k-means at k = ${intentCount}`, tfidfNmi.toFixed(3), '', ''],
      [`reference: the model's embeddings + k-means at k = ${intentCount}`, embeddingNmi.toFixed(3), '', ''],
    ]
    report.push(
      '# Analysis quality (`npm run bench:quality`)',
      '',
      machineLine(machine),
      '',
      `${queries.length} CLINC150 test queries of ${intentCount} intents, captured through the API in a shuffled order (seed ${values.seed}), each with a boilerplate assistant reply, then analysed together (as a re-analysis, in capture order); analyzer ${analyzer?.name}@${analyzer?.version}, ${values.threads} analyzer thread(s); ${window[0]!.dead} jobs dead-lettered.`,
      '',
      '| measure | figure | target | |',
      '|---|--:|---|---|',
      ...rows.map((r) => `| ${r.join(' | ')} |`),
      '',
      'Largest topics:',
      '',
      ...[...topicsReport.topics]
        .slice(0, 15)
        .map((t) => `- ${t.label} (${t.conversations}): ${t.keywords.slice(0, 6).join(', ')}`),
      `- other: ${topicsReport.other?.conversations ?? 0}`,
      ...(assistantNamed.length > 0
        ? ['', `Topics naming a word only the assistant said: ${assistantNamed.join('; ')}.`]
        : []),
    )
    console.log(report.join('\n'))
    writeFileSync(values.out, `${report.join('\n')}\n`)
    // In the repository's Markdown style (Biome aligns tables), so that the report passes the lint as written.
    await formatWritten([values.out])
    console.log(`\nwritten to ${path.relative(ROOT, values.out)}`)
    await model.close?.()
  } finally {
    await pool.end()
    await service.stop()
  }
} finally {
  await servers.stop()
}
