import type { Worker } from 'node:worker_threads'
import { startWorkerThread } from '@cas/platform'
import {
  type AnalysisContext,
  type Analyzer,
  AnalyzerError,
  type AnalyzerInfo,
  type AnalyzerThreadStats,
  type MessageAnalysis,
  type MessageToAnalyze,
  type SemanticAbilities,
} from '../analyzer.ts'
import type { ModelSource } from './embedding-model.ts'
import { loadLearnedSentiment } from './learned-sentiment.ts'

/** What a thread runs: the lexical analyzer, or the language model (semantic.ts). */
export type ThreadMode =
  | { readonly mode: 'lexical' }
  | { readonly mode: 'semantic'; readonly source: ModelSource }

export type ThreadRequest =
  | {
      readonly id: number
      readonly kind: 'analyze'
      readonly messages: readonly MessageToAnalyze[]
      readonly context: AnalysisContext
      /** Texts to embed after the analysis (SemanticAbilities.analyzeAndEmbed); their embeddings come back with the results. */
      readonly embed?: readonly string[]
    }
  | { readonly id: number; readonly kind: 'embed'; readonly texts: readonly string[] }
  | { readonly id: number; readonly kind: 'stats' }
  /** Ends the thread between two model calls (its requests in flight are not answered). */
  | { readonly kind: 'close' }
  | {
      readonly id: number
      readonly kind: 'cluster'
      readonly vectors: Float32Array
      readonly dimensions: number
      /** The existing topics' member means (poolClusters), flattened like `vectors`. */
      readonly references: Float32Array
    }

export type ThreadReply =
  | { readonly kind: 'ready'; readonly info: AnalyzerInfo; readonly model?: string; readonly loadMs: number }
  | { readonly kind: 'failed'; readonly reason: string }
  | { readonly id: number; readonly results: MessageAnalysis[]; readonly embeddings?: Float32Array[] }
  | { readonly id: number; readonly embeddings: Float32Array[] }
  | { readonly id: number; readonly clusters: number[] }
  | { readonly id: number; readonly stats: AnalyzerThreadStats }
  | {
      readonly id: number
      readonly error: { code: AnalyzerError['code']; message: string; retryable: boolean }
    }

interface Waiting {
  resolve: (value: never) => void
  reject: (err: unknown) => void
}

interface Slot {
  worker: Worker
  /** Settles once `worker` has exited. */
  exited: Promise<void>
  readonly waiting: Map<number, Waiting>
}

/** The model could not be loaded in the threads (ModelUnavailableError's reasons, passed across). */
export class ThreadsUnavailableError extends Error {
  constructor(reason: string) {
    super(reason)
    this.name = 'ThreadsUnavailableError'
  }
}

/** The worker's script: dist/local-analyzer-worker.js in the bundle, local-analyzer-worker.ts from the sources. */
function startWorker(mode: ThreadMode, nice: number): Worker {
  return startWorkerThread('local-analyzer-worker', import.meta.url, { ...mode, nice })
}

/**
 * An analyzer run in `threads` worker threads. Analysis is CPU work (the lexical scorer about 150 µs a
 * message, the language model about 1 ms): in threads of its own it runs on other cores, and the event
 * loop that answers captures and dashboard reads is never held up by it. Requests go to the thread with
 * the fewest waiting; a thread batches the requests that queue while it works (one model call for many).
 * A thread that dies fails its requests (retryable) and is started again. Threads do not keep the
 * process alive. Resolves once every thread has loaded; rejects when the model could not be loaded.
 */
export async function startAnalyzerThreads(
  threads: number,
  mode: ThreadMode,
  /** The threads' niceness on Linux (0: the process's priority); see local-analyzer-worker.ts. */
  nice = 0,
  /** Aborted while the threads load: they are closed (between two model calls) and this rejects. */
  signal?: AbortSignal,
): Promise<Analyzer> {
  let nextId = 0
  let info: AnalyzerInfo | undefined
  let model: string | undefined
  let loadMs = 0
  const loaded: Promise<void>[] = []
  const pool: Slot[] = Array.from({ length: threads }, () => ({
    worker: undefined!,
    exited: Promise.resolve(),
    waiting: new Map(),
  }))
  for (const slot of pool) loaded.push(start(slot))

  function start(slot: Slot): Promise<void> {
    const worker = startWorker(mode, nice)
    worker.unref()
    slot.worker = worker
    slot.exited = new Promise((resolve) => worker.once('exit', () => resolve()))
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: ThreadReply) => {
        if ('kind' in reply) {
          if (reply.kind === 'ready') {
            info = reply.info
            model = reply.model
            loadMs = Math.max(loadMs, reply.loadMs)
            resolve()
          } else {
            reject(new ThreadsUnavailableError(reply.reason))
          }
          return
        }
        const waiting = slot.waiting.get(reply.id)
        if (!waiting) return
        slot.waiting.delete(reply.id)
        if ('error' in reply) {
          waiting.reject(new AnalyzerError(reply.error.code, reply.error.message, reply.error.retryable))
        } else if ('results' in reply) waiting.resolve(reply as never)
        else if ('embeddings' in reply) waiting.resolve(reply.embeddings as never)
        else if ('stats' in reply) waiting.resolve(reply.stats as never)
        else waiting.resolve(reply.clusters as never)
      })
      worker.on('error', (err) => fail(slot, worker, err, reject))
      worker.on('exit', (code) =>
        fail(slot, worker, new Error(`analyzer thread exited with code ${code}`), reject),
      )
    })
  }

  function fail(slot: Slot, worker: Worker, err: Error, rejectStart: (err: Error) => void) {
    rejectStart(err)
    if (slot.worker !== worker || closed) return
    for (const waiting of slot.waiting.values()) {
      waiting.reject(new AnalyzerError('provider_error', `analyzer thread failed: ${err.message}`, true))
    }
    slot.waiting.clear()
    start(slot).catch(() => {})
  }

  let closed = false
  /**
   * Asks every thread to end and waits until it has: a thread ends between two model calls, never inside
   * one (Worker.terminate() there aborts the process with "terminate called after throwing an instance
   * of 'Napi::Error'"), even while its model loads. Requests not answered yet are failed (retryable).
   */
  async function close() {
    closed = true
    await Promise.all(
      pool.map(async (slot) => {
        for (const waiting of slot.waiting.values()) {
          waiting.reject(new AnalyzerError('provider_error', 'the analyzer is closed', true))
        }
        slot.waiting.clear()
        // Waited for: the process must not exit (and stop the thread wherever it is) meanwhile.
        slot.worker.ref()
        slot.worker.postMessage({ kind: 'close' } satisfies ThreadRequest)
        await slot.exited
      }),
    )
  }

  const closeWhileLoading = () => void close()
  signal?.addEventListener('abort', closeWhileLoading, { once: true })
  if (signal?.aborted) closeWhileLoading()
  try {
    await Promise.all(loaded)
    signal?.removeEventListener('abort', closeWhileLoading)
  } catch (err) {
    await close()
    throw err
  }

  function send<T>(
    request: Exclude<ThreadRequest, { kind: 'close' }>,
    signal?: AbortSignal,
    transfer: ArrayBuffer[] = [],
    to?: Slot,
  ): Promise<T> {
    if (signal?.aborted) return Promise.reject(new AnalyzerError('timeout', 'analysis aborted', true))
    const slot = to ?? pool.reduce((a, b) => (b.waiting.size < a.waiting.size ? b : a))
    return new Promise<T>((resolve, reject) => {
      slot.waiting.set(request.id, { resolve: resolve as (v: never) => void, reject })
      signal?.addEventListener('abort', () => {
        if (slot.waiting.delete(request.id)) reject(new AnalyzerError('timeout', 'analysis aborted', true))
      })
      slot.worker.postMessage(request, transfer)
    })
  }

  const learned = loadLearnedSentiment()
  const semantic: SemanticAbilities | undefined =
    model === undefined
      ? undefined
      : {
          model,
          embedTexts: (texts) => send<Float32Array[]>({ id: nextId++, kind: 'embed', texts: [...texts] }),
          // The threads' heads are the shipped ones (semantic.ts): the same weights, read here.
          frustrationOf: learned.frustration,
          escalationOf: learned.escalation,
          handoverOf: learned.handover,
          displeasureOf: learned.displeasure,
          gratitudeOf: learned.gratitude,
          async analyzeAndEmbed(messages, context, texts) {
            const reply = await send<AnalyzeReply>(analyzeRequest(messages, context, texts))
            return { results: reply.results, embeddings: reply.embeddings ?? [] }
          },
          cluster(vectors, references) {
            const dimensions = vectors[0]?.length ?? 0
            const flatten = (list: readonly Float32Array[]) => {
              const flat = new Float32Array(list.length * dimensions)
              for (const [i, v] of list.entries()) flat.set(v, i * dimensions)
              return flat
            }
            const flat = flatten(vectors)
            const refs = flatten(references)
            return send<number[]>(
              { id: nextId++, kind: 'cluster', vectors: flat, dimensions, references: refs },
              undefined,
              [flat.buffer, refs.buffer],
            )
          },
        }
  return {
    info: info!,
    ...(semantic ? { semantic } : {}),
    status: () => ({ state: 'ready', ...info!, ...(semantic ? { loadMs } : {}) }),
    close,
    threadStats: () =>
      Promise.all(
        pool.map((slot) => send<AnalyzerThreadStats>({ id: nextId++, kind: 'stats' }, undefined, [], slot)),
      ),
    async analyzeMessages(messages, context, signal) {
      return (await send<AnalyzeReply>(analyzeRequest(messages, context), signal)).results
    },
  }

  function analyzeRequest(
    messages: readonly MessageToAnalyze[],
    context: AnalysisContext,
    embed?: readonly string[],
  ): Extract<ThreadRequest, { kind: 'analyze' }> {
    // Plain data only: the messages' fields (and the stored turn before a job's first message: the analyzer
    // reads the turn before any other in the batch) and the context's topic lists.
    const plain = messages.map((m) => ({
      id: m.id,
      role: m.role,
      content: m.content,
      ...(m.turnBefore ? { turnBefore: m.turnBefore } : {}),
    }))
    return {
      id: nextId++,
      kind: 'analyze',
      messages: plain,
      context: { topics: context.topics },
      ...(embed && embed.length > 0 ? { embed: [...embed] } : {}),
    }
  }
}

type AnalyzeReply = Extract<ThreadReply, { results: MessageAnalysis[] }>

/** The lexical analyzer in `threads` worker threads, the same results as in the caller's thread. */
export function createThreadedLocalAnalyzer(threads: number, nice = 0): Promise<Analyzer> {
  return startAnalyzerThreads(threads, { mode: 'lexical' }, nice)
}
