/**
 * The local analyzer in a worker thread (see local-thread.ts): it answers each request with the results,
 * or with the AnalyzerError's fields.
 */
import { parentPort } from 'node:worker_threads'
import { AnalyzerError } from '../analyzer.ts'
import { createLocalAnalyzer } from './local.ts'
import type { ThreadReply, ThreadRequest } from './local-thread.ts'

const analyzer = createLocalAnalyzer()
const port = parentPort!

port.on('message', async (request: ThreadRequest) => {
  let reply: ThreadReply
  try {
    reply = { id: request.id, results: await analyzer.analyzeMessages(request.messages, request.context) }
  } catch (err) {
    reply =
      err instanceof AnalyzerError
        ? { id: request.id, error: { code: err.code, message: err.message, retryable: err.retryable } }
        : {
            id: request.id,
            error: { code: 'provider_error', message: (err as Error).message, retryable: true },
          }
  }
  port.postMessage(reply)
})
