/**
 * npm run bench:recluster [-- --sizes 10000,100000 --window 5000]
 *
 * Re-clustering time and peak memory for one chatbot of N conversations (issue 31): the real reclusterer
 * (services/analysis/src/topics/reclusterer.ts: the window read, clustered in its thread, decided,
 * written, moved by events) against the embedded PostgreSQL, migrated. Each conversation is one request
 * whose embedding is a real one (CLINC150 test and DSTC11 development requests as the service's model
 * embedded them: bench/.cache/quality, written by `npm run bench:quality` or its `--embeddings-only`)
 * with a little seeded Gaussian noise, so that N may exceed the sets. Two runs per size: the first, all
 * requests waiting in "other", makes the topics; then 10 % of a window more arrive and the second run
 * matches its clusters to those topics (the steady state). Only the window is clustered, so both runs'
 * cost is bounded by the window, whatever N; the rest of the conversations keep their topics.
 * Peak memory: the process's resident set sampled every 20 ms during a run, less before it.
 */
import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { migrate, withTransaction } from '@cas/db'
import pg from 'pg'
import type { Analyzer } from '../services/analysis/src/analyzer.ts'
import { Reclusterer } from '../services/analysis/src/topics/reclusterer.ts'
import { createTermExtractor } from '../services/analysis/src/topics/terms.ts'
import { addToWindow } from '../services/analysis/src/topics/topic-window.ts'
import { normalized } from '../services/analysis/src/topics/vectors.ts'
import { loadAverages } from './support/machine.ts'
import { seededRandom } from './support/random.ts'
import { startBenchServers } from './support/servers.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const CACHE = path.join(ROOT, 'bench/.cache/quality')
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    window: { type: 'string', default: '5000' },
    seed: { type: 'string', default: '31' },
  },
})
const sizes = values.sizes.split(',').map(Number)
const window = Number(values.window)
const MODEL = 'bench-model'

interface Base {
  readonly texts: string[]
  readonly embeddings: Float32Array[]
}

function loadBase(): Base {
  const texts: string[] = []
  const embeddings: Float32Array[] = []
  for (const set of ['clinc150', 'dstc11']) {
    const meta = path.join(CACHE, `${set}.json`)
    if (!existsSync(meta))
      throw new Error(`${meta} is missing: run npm run bench:quality -- --embeddings-only`)
    const { texts: t, dimensions } = JSON.parse(readFileSync(meta, 'utf8')) as {
      texts: string[]
      dimensions: number
    }
    const bytes = readFileSync(path.join(CACHE, `${set}.f32`))
    const flat = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)
    for (let i = 0; i < t.length; i++) {
      texts.push(t[i]!)
      embeddings.push(flat.slice(i * dimensions, (i + 1) * dimensions))
    }
  }
  return { texts, embeddings }
}

const base = loadBase()
const extractor = createTermExtractor()
const termsOf = base.texts.map((t) => extractor.terms(t))
const random = seededRandom(Number(values.seed))
const gaussian = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())

/** A real request's embedding, a little perturbed (σ 0.01 per dimension), and its terms. */
function request() {
  const i = Math.floor(random() * base.embeddings.length)
  const v = Float32Array.from(base.embeddings[i]!, (x) => x + 0.01 * gaussian())
  return { embedding: normalized(v), terms: termsOf[i]! }
}

/**
 * `count` fresh requests of the chatbot placed as the analysis places them (topic-window.ts's addToWindow,
 * the one writer of the window and of the re-clustering's count, topic_reclustering): each is counted
 * toward the next run, waiting since an hour ago so that the run is due at once.
 */
async function insertRequests(pool: pg.Pool, chatbotId: string, orgId: string, count: number): Promise<void> {
  const BATCH = 2_000
  const anHourAgo = new Date(Date.now() - 3_600_000)
  for (let done = 0; done < count; done += BATCH) {
    const points = Array.from({ length: Math.min(BATCH, count - done) }, () => ({
      conversationId: randomUUID(),
      messageId: 'q',
      ...request(),
    }))
    await withTransaction(pool, (client) => addToWindow(client, { chatbotId, orgId }, points, anHourAgo))
  }
}

/**
 * `count` more requests of the chatbot, each its conversation's, all waiting in "other". Those older than
 * the window are copies (new conversation ids) of up to 2,000 fresh ones, made by the server: only the
 * window's are ever read, and the copies keep the seeding of 100,000 short (they are not counted toward
 * the run: the window's requests make it due). Not through the capture API and the analysis: the requests
 * are real ones' embeddings perturbed, which no text gives, and 100,000 captures would take the analysis
 * minutes the measure is not about. The results, all "other", stand for what the job runner writes.
 */
async function seed(pool: pg.Pool, chatbotId: string, orgId: string, count: number): Promise<void> {
  const older = Math.max(0, count - window)
  const fresh = Math.min(older, 2_000)
  await insertRequests(pool, chatbotId, orgId, fresh)
  if (older > fresh) {
    await pool.query(
      `INSERT INTO topic_window (chatbot_id, conversation_id, message_id, embedding, terms)
       SELECT chatbot_id, gen_random_uuid(), 'q', embedding, terms
         FROM topic_window, generate_series(1, $2::int) WHERE chatbot_id = $1
        LIMIT $3`,
      [chatbotId, Math.ceil(older / fresh), older - fresh],
    )
  }
  await insertRequests(pool, chatbotId, orgId, count - older)
  await pool.query(
    `INSERT INTO analysis_results (conversation_id, message_id, org_id, chatbot_id, role, score, label, topics,
       topic_labels, analyzer, analyzed_at)
     SELECT conversation_id, message_id, $2, $1, 'user', 0, 'neutral', ARRAY['other'], ARRAY['other'], 'bench', now()
       FROM topic_window WHERE chatbot_id = $1
     ON CONFLICT DO NOTHING`,
    [chatbotId, orgId],
  )
}

async function timedRun(reclusterer: Reclusterer) {
  const before = process.memoryUsage().rss
  let peak = before
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 20)
  const started = performance.now()
  const outcome = await reclusterer.runDue()
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage().rss)
  if (!outcome?.ok) throw new Error(`the run failed: ${JSON.stringify(outcome)}`)
  const phases = Object.values(reclusterer.stats.lastPhasesMs).map((ms) => (ms / 1000).toFixed(1))
  return {
    seconds,
    phases: phases.join(' / '),
    peakMb: (peak - before) / 2 ** 20,
    rssMb: peak / 2 ** 20,
    summary: outcome.summary,
  }
}

const servers = await startBenchServers({ name: 'recluster' })
const rows: string[] = []
try {
  await migrate(servers.postgres.url)
  const pool = new pg.Pool({ connectionString: servers.postgres.url, max: 4 })
  // The reclusterer reads only the model's name and the analyzer's for the results' events.
  const analyzer = {
    info: { name: 'bench', version: '1' },
    semantic: { model: MODEL },
  } as unknown as Analyzer
  const reclusterer = new Reclusterer({
    pool,
    analyzer,
    policy: {
      window,
      growth: 0.1,
      minIntervalMs: 0,
      maxIntervalMs: 0,
      timeoutMs: 600_000,
      maxAttempts: 1,
      retryBaseMs: 1,
      pollIntervalMs: 10,
    },
  })
  for (const size of sizes) {
    const chatbotId = randomUUID()
    const orgId = randomUUID()
    await pool.query('INSERT INTO topic_models (chatbot_id, org_id, model, token) VALUES ($1, $2, $3, $4)', [
      chatbotId,
      orgId,
      MODEL,
      randomUUID(),
    ])
    const seeding = performance.now()
    await seed(pool, chatbotId, orgId, size)
    console.log(`${size}: seeded in ${((performance.now() - seeding) / 1000).toFixed(1)} s`)
    const first = await timedRun(reclusterer)
    await seed(pool, chatbotId, orgId, Math.round(window / 10))
    const second = await timedRun(reclusterer)
    const load = loadAverages()
    for (const [name, run] of [
      ['first', first],
      ['steady', second],
    ] as const) {
      rows.push(
        `| ${size.toLocaleString('en')} | ${name} | ${Math.min(window, size).toLocaleString('en')} | ${run.seconds.toFixed(1)} | ${run.phases} | ${run.peakMb.toFixed(0)} | ${run.rssMb.toFixed(0)} | ${run.summary.topics} | ${run.summary.kept} | ${run.summary.created} | ${run.summary.merged + run.summary.retired} | ${load} |`,
      )
      console.log(rows.at(-1))
    }
  }
  await pool.end()
} finally {
  await servers.stop()
}
console.log(
  [
    '',
    `Re-clustering one chatbot (${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'cpu'}):`,
    '| conversations | run | window | seconds | read / cluster / commit (s) | peak memory added (MB) | resident set (MB) | clusters | kept | new | merged or retired | load average (1, 5, 15 min) |',
    '|--:|---|--:|--:|---|--:|--:|--:|--:|--:|--:|---|',
    ...rows,
  ].join('\n'),
)
