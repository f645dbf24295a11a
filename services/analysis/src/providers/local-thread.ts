import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import {
  type AnalysisContext,
  type Analyzer,
  AnalyzerError,
  type MessageAnalysis,
  type MessageToAnalyze,
} from '../analyzer.ts'
import { LOCAL_ANALYZER_INFO } from './local.ts'

export interface ThreadRequest {
  readonly id: number
  readonly messages: readonly MessageToAnalyze[]
  readonly context: AnalysisContext
}

export type ThreadReply =
  | { readonly id: number; readonly results: MessageAnalysis[] }
  | {
      readonly id: number
      readonly error: { code: AnalyzerError['code']; message: string; retryable: boolean }
    }

interface Waiting {
  resolve: (results: MessageAnalysis[]) => void
  reject: (err: unknown) => void
}

/**
 * The worker's script: the bundle's own (dist/local-analyzer-worker.js, next to the service's bundle),
 * or, run from the sources, the TypeScript file through tsx.
 */
function startWorker(): Worker {
  const bundled = new URL('./local-analyzer-worker.js', import.meta.url)
  if (existsSync(fileURLToPath(bundled))) return new Worker(bundled)
  const source = new URL('./local-analyzer-worker.ts', import.meta.url).href
  return new Worker(
    `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(source)}, ${JSON.stringify(source)}))`,
    { eval: true },
  )
}

/**
 * The local analyzer run in `threads` worker threads, the same results as in the caller's thread. Scoring
 * is CPU work (about 150 µs a message): in a thread of its own it runs on another core, and the event loop
 * that answers captures and dashboard reads is never held up by it. Batches go to the thread with the
 * fewest waiting. A thread that dies fails its batches (retryable) and is started again. Threads do not
 * keep the process alive.
 */
export function createThreadedLocalAnalyzer(threads: number): Analyzer {
  let nextId = 0
  const pool = Array.from({ length: threads }, () => ({
    worker: start(),
    waiting: new Map<number, Waiting>(),
  }))

  function start(): Worker {
    const worker = startWorker()
    worker.unref()
    worker.on('message', (reply: ThreadReply) => {
      const slot = pool.find((s) => s.worker === worker)
      const waiting = slot?.waiting.get(reply.id)
      if (!slot || !waiting) return
      slot.waiting.delete(reply.id)
      if ('results' in reply) waiting.resolve(reply.results)
      else waiting.reject(new AnalyzerError(reply.error.code, reply.error.message, reply.error.retryable))
    })
    worker.on('error', (err) => fail(worker, err))
    worker.on('exit', (code) => fail(worker, new Error(`analyzer thread exited with code ${code}`)))
    return worker
  }

  function fail(worker: Worker, err: Error) {
    const slot = pool.find((s) => s.worker === worker)
    if (!slot) return
    for (const waiting of slot.waiting.values()) {
      waiting.reject(new AnalyzerError('provider_error', `analyzer thread failed: ${err.message}`, true))
    }
    slot.waiting.clear()
    slot.worker = start()
  }

  return {
    info: LOCAL_ANALYZER_INFO,
    analyzeMessages(messages, context, signal) {
      if (signal?.aborted) return Promise.reject(new AnalyzerError('timeout', 'analysis aborted', true))
      const slot = pool.reduce((a, b) => (b.waiting.size < a.waiting.size ? b : a))
      const id = nextId++
      return new Promise<MessageAnalysis[]>((resolve, reject) => {
        slot.waiting.set(id, { resolve, reject })
        signal?.addEventListener('abort', () => {
          if (slot.waiting.delete(id)) reject(new AnalyzerError('timeout', 'analysis aborted', true))
        })
        // Plain data only: the context's topic lists and the messages' fields.
        const request: ThreadRequest = {
          id,
          messages: messages.map((m) => ({ id: m.id, role: m.role, content: m.content })),
          context: { topics: context.topics },
        }
        slot.worker.postMessage(request)
      })
    },
  }
}
