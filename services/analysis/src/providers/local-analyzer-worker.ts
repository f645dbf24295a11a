/**
 * An analyzer thread (see analyzer-threads.ts): loads the lexical analyzer or the language model, says
 * whether it could, then answers requests. Analyses that queue while the model works are answered
 * together, with one model call: batching many short messages is what makes the model fast.
 */
import { readFileSync, readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { type Analyzer, AnalyzerError, type MessageAnalysis } from '../analyzer.ts'
import { poolClusters } from '../topics/agglomerative.ts'
import type { ThreadMode, ThreadReply, ThreadRequest } from './analyzer-threads.ts'
import { createLocalAnalyzer } from './local.ts'
import { createSemanticAnalyzer, type SemanticAnalyzer } from './semantic.ts'

type AnalyzeRequest = Extract<ThreadRequest, { kind: 'analyze' }>
type ServedRequest = Exclude<ThreadRequest, { kind: 'close' }>

const port = parentPort!
const { nice, ...mode } = workerData as ThreadMode & { nice: number }

lowerThisThreadsPriority(nice)

// The pool's close (analyzer-threads.ts) is a message, handled here between two calls into onnxruntime,
// never during one: a thread stopped inside a model call (Worker.terminate(), or the process exiting)
// aborts the whole process ("terminate called after throwing an instance of 'Napi::Error'"). It ends the
// thread at once, even while the model loads; the requests that come before the model is loaded wait.
const early: ServedRequest[] = []
let serve: ((request: ServedRequest) => void) | undefined
port.on('message', (request: ThreadRequest) => {
  if (request.kind === 'close') process.exit(0)
  else if (serve) serve(request)
  else early.push(request)
})

let analyzer: Analyzer
let semantic: SemanticAnalyzer | undefined
try {
  if (mode.mode === 'semantic') {
    semantic = await createSemanticAnalyzer(mode.source)
    analyzer = semantic
  } else {
    analyzer = createLocalAnalyzer()
  }
  const ready: ThreadReply = {
    kind: 'ready',
    info: analyzer.info,
    ...(semantic ? { model: semantic.semantic.model, loadMs: semantic.model.loadMs } : { loadMs: 0 }),
  }
  port.postMessage(ready)
} catch (err) {
  port.postMessage({ kind: 'failed', reason: (err as Error).message } satisfies ThreadReply)
}

const queue: AnalyzeRequest[] = []
let draining = false

serve = (request) => void answer(request)
for (const request of early.splice(0)) serve(request)

async function answer(request: ServedRequest) {
  if (request.kind === 'analyze') {
    queue.push(request)
    if (!draining) await drain()
    return
  }
  try {
    if (request.kind === 'stats') {
      const { idle, active } = performance.eventLoopUtilization()
      reply({
        id: request.id,
        stats: { idleMs: idle, activeMs: active, cpuMs: thisThreadsCpuMs(), runQueueMs: runQueueMs() },
      })
    } else if (request.kind === 'embed') {
      if (!semantic) throw new AnalyzerError('provider_error', 'no language model in this thread', false)
      reply({ id: request.id, embeddings: await semantic.semantic.embedTexts(request.texts) })
    } else {
      const { vectors, dimensions, references } = request
      const split = (flat: Float32Array) =>
        Array.from({ length: dimensions === 0 ? 0 : flat.length / dimensions }, (_, i) =>
          flat.subarray(i * dimensions, (i + 1) * dimensions),
        )
      reply({ id: request.id, clusters: poolClusters(split(vectors), split(references)) })
    }
  } catch (err) {
    reply(errorReply(request.id, err))
  }
}

/**
 * Answers the queued analyses. The model's requests go together in one call (their context is not
 * used: topics are decided elsewhere); the lexical analyzer's one by one, each with its topic list.
 */
async function drain() {
  draining = true
  try {
    while (queue.length > 0) {
      const batch = semantic ? queue.splice(0) : queue.splice(0, 1)
      await analyzeTogether(batch)
    }
  } finally {
    draining = false
  }
}

async function analyzeTogether(batch: AnalyzeRequest[]) {
  // A request the analyzer refuses (bad input) must not fail the others it would be batched with.
  const valid = batch.filter((r) => {
    const bad = r.messages.find((m) => typeof m.content !== 'string')
    if (bad) {
      const error = new AnalyzerError('invalid_input', `message ${String(bad.id)} has no text content`, false)
      reply(errorReply(r.id, error))
    }
    return !bad
  })
  if (valid.length === 0) return
  try {
    // Each request's first message reads no turn of the request before it (MessageToAnalyze.turnBefore).
    const results: MessageAnalysis[] = await analyzer.analyzeMessages(
      valid.flatMap((r) =>
        r.messages.map((m, i) => (i === 0 && !m.turnBefore ? { ...m, turnBefore: {} } : m)),
      ),
      valid[0]!.context,
    )
    let offset = 0
    for (const r of valid) {
      const own = results.slice(offset, offset + r.messages.length)
      offset += r.messages.length
      if (!r.embed) {
        reply({ id: r.id, results: own })
        continue
      }
      // Each request's texts in a call of their own after the batch's analysis, as when asked apart.
      try {
        if (!semantic) throw new AnalyzerError('provider_error', 'no language model in this thread', false)
        reply({ id: r.id, results: own, embeddings: await semantic.semantic.embedTexts(r.embed) })
      } catch (err) {
        reply(errorReply(r.id, err))
      }
    }
  } catch (err) {
    for (const r of valid) reply(errorReply(r.id, err))
  }
}

/**
 * Analysis is background work: on Linux this thread (and only it: setpriority with a thread id) runs at
 * a lower priority, so that under load the cores go to answering captures and projecting first, and
 * analysis takes what is left (it trails, visibly, and catches up). Elsewhere it stays as it is.
 */
function lowerThisThreadsPriority(niceness: number) {
  if (niceness === 0) return
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').at(-1))
    setPriority(threadId, niceness)
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}

/** This thread's CPU time so far (Linux: /proc/thread-self/stat, in clock ticks of 10 ms). */
function thisThreadsCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

/** The time this thread was ready to run and waited for a core (Linux: /proc/thread-self/schedstat, in ns). */
function runQueueMs(): number | undefined {
  try {
    const ns = Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1])
    return Number.isFinite(ns) ? ns / 1e6 : undefined
  } catch {
    return undefined
  }
}

function reply(message: ThreadReply) {
  port.postMessage(message)
}

function errorReply(id: number, err: unknown): ThreadReply {
  return err instanceof AnalyzerError
    ? { id, error: { code: err.code, message: err.message, retryable: err.retryable } }
    : { id, error: { code: 'provider_error', message: (err as Error).message, retryable: true } }
}
