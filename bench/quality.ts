/**
 * Analysis quality, measured the way a support lead meets it (issue 31, "Measured, not asserted"), on both
 * development sets (quality/datasets.ts): CLINC150's test split (150 intents over ten unrelated domains) and
 * DSTC11 track 2's development set (22 intents of one insurer, where requests lie close together). Each is
 * captured through the real API of the all-in-one service (`dist/all-in-one.js` on the embedded Postgres,
 * analysing with the language model from ../shared/models) as realistic conversations: a share open with
 * a greeting and state the request in the end user's second message, every request gets a boilerplate
 * reply. The conversations' topics are read back through the API.
 *
 *   npm run bench:quality [-- --set clinc150|dstc11|both --limit N --greeting-share 0.3 --concurrency 8
 *                              --threads 1 --analysis-concurrency 16 --seed 1 --out bench/QUALITY.md
 *                              --skip-build --embeddings-only --statements]
 *
 * Per set: NMI, ACC (1:1 Hungarian, DSTC11's primary metric) and ARI of the conversations' topics against
 * the intents ("other" one cluster of its own); the number of topics; the largest topic's share beside the
 * largest intent's; label agreement; the share of topics made of the assistant's words; end-user messages
 * analysed per second, and meanwhile the CPU per end-user message of the service's threads and of Postgres
 * (Linux /proc: the figure to compare on a shared machine, where the rate follows the other sessions);
 * what the embedded Postgres logged meanwhile (support/postgres-log.ts: deadlocks,
 * flagged as a problem, other errors, statements over 100 ms and the three slowest; the whole log in
 * bench/.cache/quality/postgres.log). `--statements` (console only) lists what Postgres ran while the jobs
 * were analysed (pg_stat_statements): calls per end-user message, time and share of each statement, the
 * commits per message and the tables written out of line (TOAST). Beside them, anchors computed first in the same run on the same
 * requests and the same MiniLM embeddings (quality/anchors.ts), before the service starts, so that they do not slow it.
 * Targets from issue 31 beside the figures. Nothing in the service is tuned to these sets. Then sentiment
 * (sentiment/measure.ts): precision and recall per class and macro-F1 of the learned heads beside VADER,
 * on VADER's four corpora, the UCI sentences, GoEmotions' test split and the support messages, with issue
 * 32's targets.
 *
 * The embeddings are exported to bench/.cache/quality/<set>.{json,f32} (git-ignored) for studies
 * (bench/FINDINGS.md, issue 31); --embeddings-only exports them and stops.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { withDatabase } from '@cas/db'
import pg from 'pg'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { createTermExtractor } from '../services/analysis/src/topics/terms.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { type Anchors, computeAnchors } from './quality/anchors.ts'
import { measureCustomSignalSets } from './quality/custom-signals.ts'
import { BOILERPLATE, type DevelopmentSet, loadSet, SET_NAMES, type SetName } from './quality/datasets.ts'
import { createLabelAgreement } from './quality/label-agreement.ts'
import { type ClusteringScore, scoreClustering } from './quality/metrics.ts'
import { loadSignalsSet, measureOtherSignalSets, measureSignals, signalsReport } from './quality/signals.ts'
import { measureThroughApi, type ThroughApi } from './quality/through-api.ts'
import { measureSentiment, sentimentMarkdown, sentimentTargets } from './sentiment/measure.ts'
import { formatWritten } from './support/format.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import {
  type PostgresLogSummary,
  postgresLogLines,
  SLOW_STATEMENT_MS,
  truncate,
} from './support/postgres-log.ts'
import { startBenchServers } from './support/servers.ts'
import { DIST_ALL_IN_ONE, startService } from './support/service.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: {
    set: { type: 'string', default: 'both' },
    /** At most this many requests of each set (all by default). */
    limit: { type: 'string' },
    'greeting-share': { type: 'string', default: '0.3' },
    concurrency: { type: 'string', default: '8' },
    threads: { type: 'string', default: '1' },
    /** ANALYSIS_CONCURRENCY of the service; its default when unset. */
    'analysis-concurrency': { type: 'string' },
    seed: { type: 'string', default: '1' },
    data: { type: 'string', default: path.join(ROOT, '../shared/data') },
    out: { type: 'string', default: path.join(ROOT, 'bench/QUALITY.md') },
    'skip-build': { type: 'boolean', default: false },
    'embeddings-only': { type: 'boolean', default: false },
    /** pg_stat_statements over each set's analysis: the statements per end-user message (console only). */
    statements: { type: 'boolean', default: false },
    /** Leave the signal sets kept blind out of the signal tables (a topics run that must not read them). */
    'without-blind': { type: 'boolean', default: false },
  },
})
if (values.set !== 'both' && !SET_NAMES.includes(values.set as SetName)) {
  throw new Error(`--set is clinc150, dstc11 or both, not ${values.set}`)
}
const setNames: SetName[] = values.set === 'both' ? [...SET_NAMES] : [values.set as SetName]
const seed = Number(values.seed)
const greetingShare = Number(values['greeting-share'])

/** Issue 31's targets, on this machine. */
const TARGETS = {
  topicsPerIntent: 2,
  largestPerLargestIntent: 2,
  labelAgreement: 0.9,
  messagesPerSecond: 450,
}

const machine = await machineInfo()
console.log(machineLine(machine))
const sets = setNames.map((name) =>
  loadSet(name, values.data, { seed, limit: values.limit ? Number(values.limit) : undefined }),
)

// The anchors, and the embeddings exported for studies, before the service runs.
const cacheDir = path.join(ROOT, 'bench/.cache/quality')
mkdirSync(cacheDir, { recursive: true })
const model = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(ROOT, '.cache/models'),
  hubUrl: UNREACHABLE_HUB,
})
// Conversation signals (issue 32) on the labelled conversations, with the same model.
const signals = await measureSignals(model, loadSignalsSet())
const otherSignals = await measureOtherSignalSets(model, { withBlind: !values['without-blind'] })
const customSignals = await measureCustomSignalSets(model)
const anchors = new Map<SetName, Anchors>()
const embedRates = new Map<SetName, number>()
for (const set of sets) {
  const texts = set.requests.map((r) => r.text)
  const intents = set.requests.map((r) => r.intent)
  const started = performance.now()
  // Trimmed as the service embeds a message.
  const embeddings = await model.semantic.embedTexts(texts.map((t) => t.trim()))
  embedRates.set(set.name, texts.length / ((performance.now() - started) / 1000))
  const flat = new Float32Array(embeddings.length * (embeddings[0]?.length ?? 0))
  for (const [i, e] of embeddings.entries()) flat.set(e, i * e.length)
  writeFileSync(path.join(cacheDir, `${set.name}.f32`), flat)
  writeFileSync(
    path.join(cacheDir, `${set.name}.json`),
    JSON.stringify({ model: model.semantic.model, seed, dimensions: embeddings[0]?.length, texts, intents }),
  )
  console.log(`${set.name}: ${texts.length} requests embedded, exported to ${path.relative(ROOT, cacheDir)}`)
  if (values['embeddings-only']) continue
  anchors.set(set.name, computeAnchors(texts, intents, embeddings, seed))
  console.log(`${set.name}: anchors computed`)
}
await model.close?.()
if (values['embeddings-only']) process.exit(0)
// Sentiment on the public sets and the support messages, in the same run, before the service starts.
const sentiment = await measureSentiment()
console.log('sentiment measured')

if (!values['skip-build'] || !existsSync(DIST_ALL_IN_ONE)) {
  execFileSync(process.execPath, ['infra/build.mjs'], { cwd: ROOT, stdio: 'inherit' })
}
const measured = new Map<SetName, ThroughApi>()
const postgresLogs = new Map<SetName, PostgresLogSummary>()
let analyzer: { state: string; name: string; version: string; loadMs?: number } | undefined
const postgresLogFile = path.join(cacheDir, 'postgres.log')
writeFileSync(postgresLogFile, '')
const servers = await startBenchServers({
  name: 'quality',
  watchPostgresLog: true,
  postgresLog: postgresLogFile,
  ...(values.statements
    ? { postgres: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } }
    : {}),
})
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
    type Readiness = { details?: { analyzer?: typeof analyzer } }
    const analyzerStatus = async () =>
      ((await (await fetch(`${service.url}/readyz`)).json()) as Readiness).details?.analyzer
    analyzer = await analyzerStatus()
    for (let tries = 0; analyzer?.state === 'loading' && tries < 600; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      analyzer = await analyzerStatus()
    }
    if (analyzer?.state !== 'ready') {
      throw new Error(`the service is not analysing with the model: ${JSON.stringify(analyzer)}`)
    }
    for (const set of sets) {
      const logMark = servers.postgresLog!.mark()
      measured.set(
        set.name,
        await measureThroughApi(service.url, pool, set, {
          analyzer: { name: analyzer.name, version: analyzer.version },
          concurrency: Number(values.concurrency),
          greetingShare,
          seed,
          statements: values.statements,
          ...(service.worker.process.pid
            ? { cpu: { pid: service.worker.process.pid, postgresDataDir: path.join(servers.scratch, 'pg') } }
            : {}),
        }),
      )
      console.log(`${set.name}: captured and analysed through the API`)
      postgresLogs.set(set.name, servers.postgresLog!.summarise(logMark))
      for (const line of postgresLogLines(postgresLogs.get(set.name)!)) console.log(`  Postgres: ${line}`)
      const cpu = measured.get(set.name)!.analysisCpu
      if (cpu)
        console.log(`  CPU per end-user message while analysed: ${analysisCpuLine(measured.get(set.name)!)}`)
      const statements = measured.get(set.name)!.analysisStatements
      if (statements) {
        const n = measured.get(set.name)!.userMessages
        const total = statements.statements.reduce((sum, s) => sum + s.totalMs, 0)
        const calls = statements.statements.reduce((sum, s) => sum + s.calls, 0)
        console.log(
          `  Statements while analysed: ${(calls / n).toFixed(2)} per end-user message, ${(statements.commits / n).toFixed(2)} commits; ${total.toFixed(0)} ms in all (calls per message, ms, share, rows per call):`,
        )
        console.log(
          `  Out of line (TOAST): ${statements.toasted.map((t) => `${t.table} ${(t.bytes / 1024).toFixed(0)} KiB`).join(', ') || 'none'}`,
        )
        for (const s of statements.statements.slice(0, 40)) {
          console.log(
            `    ${(s.calls / n).toFixed(3).padStart(7)} ${s.totalMs.toFixed(0).padStart(6)} ${((s.totalMs / total) * 100).toFixed(1).padStart(5)} % ${(s.rows / Math.max(1, s.calls)).toFixed(1).padStart(6)}  ${truncate(s.query, 160)}`,
          )
        }
      }
    }
  } finally {
    await pool.end()
    await service.stop()
  }
} finally {
  await servers.stop()
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`
const meets = (ok: boolean) => (ok ? '**met**' : '**missed**')
const extractor = createTermExtractor()
const botTerms = new Set(BOILERPLATE.flatMap((text) => extractor.terms(text)))
const labelAgreement = createLabelAgreement()

/**
 * The CPU the service's threads and Postgres used per end-user message while the jobs were analysed, in
 * ms: the figure to compare between runs on a shared machine (msgs/s follows the other sessions' load).
 */
function analysisCpuLine(run: ThroughApi): string {
  const cpu = run.analysisCpu!
  const ms = (seconds: number) => ((seconds * 1000) / run.userMessages).toFixed(2)
  const total = cpu.threads.reduce((sum, t) => sum + t.seconds, 0)
  const main = cpu.threads.find((t) => t.main)?.seconds ?? 0
  // Node names none of its threads: the busiest other is the analyzer thread (the model), most likely
  // followed by the projector's.
  const others = cpu.threads.filter((t) => !t.main && t.seconds > 0).slice(0, 3)
  return `service ${ms(total)} (main thread ${ms(main)}, busiest others ${others.map((t) => ms(t.seconds)).join(' / ')}); Postgres ${ms(cpu.postgres)}`
}

function setReport(
  set: DevelopmentSet,
  run: ThroughApi,
  anchor: Anchors,
  pgLog: PostgresLogSummary,
): string[] {
  const intents = set.requests.map((r) => r.intent)
  const intentCount = new Set(intents).size
  const score = scoreClustering(intents, [...run.topicOfRequest], { other: 'other' })
  const covered = run.topicOfRequest.map((c, i) => [c, i] as const).filter(([c]) => c !== 'other')
  const topicCount = new Set(covered.map(([c]) => c)).size
  const topicById = new Map(run.topics.map((t) => [t.id, t]))
  const members = new Map<string, number[]>()
  for (const [c, i] of covered) members.set(c, [...(members.get(c) ?? []), i])
  const agreement = labelAgreement(
    [...members].map(([c, is]) => ({
      label: topicById.get(c)?.label ?? c,
      memberIntents: is.map((i) => intents[i]!),
    })),
  )
  // A topic made of the assistant's words: a term of its keywords that the bot said and none of the end
  // users whose conversations are in the topic did.
  const botOnly = (c: string) => {
    const said = new Set(members.get(c)!.flatMap((i) => extractor.terms(set.requests[i]!.text)))
    return (topicById.get(c)?.keywords ?? []).filter((t) => botTerms.has(t) && !said.has(t))
  }
  const assistantTopics = [...members.keys()].filter((c) => botOnly(c).length > 0)
  const fromAssistant = covered.filter(([c]) => assistantTopics.includes(c)).length
  const perSecond = run.userMessages / run.analysisSeconds
  const bar = anchor.silhouette.score
  const barName = anchor.silhouette.atBound ? "silhouette anchor, k at its sweep's end" : 'silhouette anchor'
  const floor = anchor.tfidf.score
  const f = (x: number) => x.toFixed(3)
  const rows: string[][] = [
    [
      'NMI against the intents ("other" one cluster)',
      f(score.nmi),
      `≥ ${f(bar.nmi)} (${barName}), ≥ ${f(floor.nmi)} (TF-IDF)`,
      meets(score.nmi >= bar.nmi && score.nmi >= floor.nmi),
    ],
    [
      'ACC (1:1 Hungarian)',
      f(score.acc),
      `≥ ${f(bar.acc)} (${barName}), ≥ ${f(floor.acc)} (TF-IDF)`,
      meets(score.acc >= bar.acc && score.acc >= floor.acc),
    ],
    ['ARI', f(score.ari), '', ''],
    [
      'topics',
      `${topicCount} (${run.topics.length} listed)`,
      `≤ ${TARGETS.topicsPerIntent * intentCount}, not told ${intentCount}`,
      meets(topicCount <= TARGETS.topicsPerIntent * intentCount),
    ],
    [
      'largest topic (largest intent)',
      `${pct(score.largestShare)} (${pct(score.largestLabelShare)})`,
      `≤ ${pct(TARGETS.largestPerLargestIntent * score.largestLabelShare)}`,
      meets(score.largestShare <= TARGETS.largestPerLargestIntent * score.largestLabelShare),
    ],
    [
      "label agreement (label shares a stem with the topic's majority intent)",
      `${f(agreement.share)} (${agreement.agreeing} of ${agreement.topics})`,
      `≥ ${TARGETS.labelAgreement}`,
      meets(agreement.share >= TARGETS.labelAgreement),
    ],
    [
      'coverage (conversations with a topic other than "other")',
      pct(covered.length / intents.length),
      '',
      '',
    ],
    [
      "conversations whose topic is the assistant's words",
      pct(covered.length === 0 ? 0 : fromAssistant / covered.length),
      '0 %',
      meets(fromAssistant === 0),
    ],
    [
      `end-user messages analysed per second (${run.userMessages}, greetings included; jobs to topics in the read models)`,
      perSecond.toFixed(0),
      `≥ ${TARGETS.messagesPerSecond}`,
      meets(perSecond >= TARGETS.messagesPerSecond),
    ],
    [
      'capture of the conversations, requests per second',
      (intents.length / run.captureSeconds).toFixed(0),
      '',
      '',
    ],
    ...(run.analysisCpu
      ? [
          [
            'CPU per end-user message while analysed (ms: the service, its busiest threads; Postgres)',
            analysisCpuLine(run),
            '',
            '',
          ],
        ]
      : []),
    ['the model alone, one thread, embeddings per second', embedRates.get(set.name)!.toFixed(0), '', ''],
    [
      'Postgres log during the set: "deadlock detected" (each costs deadlock_timeout, 1 s, and a retried batch)',
      String(pgLog.deadlocks),
      '0',
      pgLog.deadlocks === 0 ? '**met**' : '**PROBLEM**',
    ],
    [
      'Postgres log during the set: other errors',
      pgLog.errorMessages.length === 0
        ? '0'
        : `${pgLog.otherErrors} (${pgLog.errorMessages
            .slice(0, 3)
            .map((e) => `${e.count}× ${truncate(e.message, 60).replaceAll('|', '\\|')}`)
            .join('; ')})`,
      '',
      '',
    ],
    [
      `Postgres log during the set: statements over ${SLOW_STATEMENT_MS} ms`,
      String(pgLog.slow.length),
      '',
      '',
    ],
    [
      'after the last result, until the background re-clustering settled (its default schedule), seconds',
      run.settleSeconds.toFixed(0),
      '',
      '',
    ],
  ]
  const anchorRow = (a: { name: string; score: ClusteringScore; seconds: number }) =>
    `| ${a.name} | ${f(a.score.nmi)} | ${f(a.score.acc)} | ${f(a.score.ari)} | ${a.score.clusters} | ${pct(a.score.largestShare)} | ${a.seconds.toFixed(1)} s |`
  return [
    `## ${set.description}`,
    '',
    `${intents.length} requests of ${intentCount} intents, captured through the API in a shuffled order (seed ${seed}) as conversations, ${run.greeted} of them (${pct(run.greeted / intents.length)}) opening with a greeting the bot answers, the request second; each request with a boilerplate assistant reply; analysed together (as a re-analysis, in capture order); ${run.deadJobs} jobs dead-lettered.`,
    '',
    '| measure | this service | target | |',
    '|---|--:|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    ...(pgLog.deadlocks > 0
      ? [
          '',
          `**Problem: ${pgLog.deadlocks} deadlocks in the Postgres log** during this set (bench/.cache/quality/postgres.log): each held a batch for deadlock_timeout (1 s) before one was retried: the rate above is lowered by them. Deadlocked: ${pgLog.deadlockStatements
            .slice(0, 3)
            .map((t) => `\`${truncate(t, 80)}\``)
            .join('; ')}.`,
        ]
      : []),
    ...(pgLog.slow.length > 0
      ? [
          '',
          `Slowest statements: ${pgLog.slow
            .slice(0, 3)
            .map((q) => `${q.ms.toFixed(0)} ms \`${truncate(q.statement, 80)}\``)
            .join('; ')}.`,
        ]
      : []),
    '',
    'Anchors, computed in the same run on the same requests and the same MiniLM q8 embeddings:',
    '',
    '| | NMI | ACC | ARI | clusters | largest | time |',
    '|---|--:|--:|--:|--:|--:|--:|',
    `| this service | ${f(score.nmi)} | ${f(score.acc)} | ${f(score.ari)} | ${score.clusters} | ${pct(score.largestShare)} | |`,
    anchorRow(anchor.tfidf),
    anchorRow(anchor.embeddingsToldK),
    anchorRow(anchor.silhouette),
    '',
    `${anchor.silhouette.note}.`,
    '',
    `Largest topics (largest intent ${pct(score.largestLabelShare)}):`,
    '',
    ...[...run.topics]
      .slice(0, 12)
      .map((t) => `- ${t.label} (${t.conversations}): ${t.keywords.slice(0, 6).join(', ')}`),
    `- other: ${run.other}`,
    '',
    agreement.disagreeing.length === 0
      ? 'Every label shares a stem with its majority intent.'
      : `Labels sharing no stem with their majority intent (${agreement.disagreeing.length}): ${agreement.disagreeing
          .slice(0, 15)
          .map((d) => `"${d.label}" (${d.intent})`)
          .join('; ')}${agreement.disagreeing.length > 15 ? '; …' : ''}.`,
    ...(assistantTopics.length > 0
      ? [
          '',
          `Topics naming a word only the assistant said: ${assistantTopics.map((c) => `${topicById.get(c)?.label ?? c} (${botOnly(c).join(', ')})`).join('; ')}.`,
        ]
      : []),
  ]
}

const report = [
  '# Analysis quality (`npm run bench:quality`)',
  '',
  machineLine(machine),
  '',
  `Analyzer ${analyzer?.name}@${analyzer?.version}, ${values.threads} analyzer thread(s), model load ${analyzer?.loadMs ?? '?'} ms. Targets from issue 31, on this machine; the re-clustering time and memory for one chatbot of 10,000 and 100,000 conversations are measured by \`npm run bench:recluster\` (bench/FINDINGS.md, "Issue 31, item 2"); the topics here are read once the background re-clustering has settled.`,
  '',
  ...sets.flatMap((set) => [
    ...setReport(set, measured.get(set.name)!, anchors.get(set.name)!, postgresLogs.get(set.name)!),
    '',
  ]),
  ...signalsReport(signals, customSignals, otherSignals),
  '',
  '## Sentiment: learned heads beside VADER (`npm run bench:sentiment` measures the same)',
  '',
  ...sentimentTargets(sentiment),
  '',
  ...sentimentMarkdown(sentiment),
  '',
]
console.log(report.join('\n'))
writeFileSync(values.out, `${report.join('\n')}\n`)
// In the repository's Markdown style (Biome aligns tables), so that the report passes the lint as written.
await formatWritten([values.out])
console.log(`\nwritten to ${path.relative(ROOT, values.out)}`)
