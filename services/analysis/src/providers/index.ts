import path from 'node:path'
import type { AnalysisConfig, DatabaseConfig } from '@cas/config'
import type { Analyzer, AnalyzerStatus } from '../analyzer.ts'
import { startAnalyzerThreads } from './analyzer-threads.ts'
import { EMBEDDING_MODEL_ID, type ModelSource } from './embedding-model.ts'
import { createLlmAnalyzer } from './llm.ts'
import { createLocalAnalyzer } from './local.ts'
import { createSemanticAnalyzer, SEMANTIC_ANALYZER_NAME } from './semantic.ts'

type Log = (msg: string, fields?: Record<string, unknown>) => void

/** What the analyzers read: the analysis variables, and DATA_DIR (where a downloaded model is kept). */
export type AnalyzerConfig = AnalysisConfig & Pick<DatabaseConfig, 'DATA_DIR'>

/**
 * The analyzer ANALYSIS_PROVIDER names:
 * - `local` (default): the local language model (semantic.ts), loaded in the background from
 *   ANALYSIS_MODEL_DIR or the hub (cached under DATA_DIR/models); when it cannot be had, the lexical
 *   analyzer, with one warning saying how to get the model. `ready` resolves once one of them is in use.
 * - `lexical`: the lexical analyzer alone (VADER and key phrases, no model).
 * - `llm`: an OpenAI-compatible LLM.
 * Local analyzers run in ANALYSIS_THREADS worker threads, or in the caller's thread with 0.
 */
export async function createAnalyzer(config: AnalyzerConfig, log: Log = () => {}): Promise<Analyzer> {
  if (config.ANALYSIS_PROVIDER === 'llm') {
    // loadConfig has checked that the three are set when the provider is llm.
    return createLlmAnalyzer({
      baseUrl: config.LLM_BASE_URL!,
      apiKey: config.LLM_API_KEY!,
      model: config.LLM_MODEL!,
      timeoutMs: config.LLM_TIMEOUT_MS,
      concurrency: config.LLM_CONCURRENCY,
      log,
    })
  }
  const lexical = () =>
    config.ANALYSIS_THREADS > 0
      ? startAnalyzerThreads(config.ANALYSIS_THREADS, { mode: 'lexical' }, config.ANALYSIS_THREAD_NICE)
      : Promise.resolve(createLocalAnalyzer())
  if (config.ANALYSIS_PROVIDER === 'lexical') return lexical()
  const source = modelSource(config)
  // Closed while the model loads in threads, the threads end at once (between two model calls).
  const loading = new AbortController()
  const model =
    config.ANALYSIS_THREADS > 0
      ? startAnalyzerThreads(
          config.ANALYSIS_THREADS,
          { mode: 'semantic', source },
          config.ANALYSIS_THREAD_NICE,
          loading.signal,
        )
      : createSemanticAnalyzer(source)
  return withFallback(model, lexical, source, log, () => loading.abort())
}

export function modelSource(config: AnalyzerConfig): ModelSource {
  return {
    ...(config.ANALYSIS_MODEL_DIR ? { modelDir: config.ANALYSIS_MODEL_DIR } : {}),
    cacheDir: path.join(config.DATA_DIR, 'models'),
    hubUrl: config.ANALYSIS_MODEL_HUB_URL,
  }
}

/**
 * The model once loaded, else the lexical analyzer: usable at once, `ready` when either is in use, and
 * `status()` telling which (for /readyz and the metrics).
 */
function withFallback(
  model: Promise<Analyzer>,
  lexical: () => Promise<Analyzer>,
  source: ModelSource,
  log: Log,
  /** Stops the model's loading (its threads'), if it can be stopped. */
  stopLoading: () => void,
) {
  let current: Analyzer | undefined
  let closing = false
  let status: AnalyzerStatus = { state: 'loading', name: SEMANTIC_ANALYZER_NAME, version: EMBEDDING_MODEL_ID }
  const ready = model.then(
    (analyzer) => {
      current = analyzer
      status = analyzer.status?.() ?? { state: 'ready', ...analyzer.info }
    },
    async (err: Error) => {
      // Closed while loading: neither the model nor its fallback is wanted any more.
      if (closing) return
      const reason = `${err.message}. To analyse with it, set ANALYSIS_MODEL_DIR to a folder holding ${EMBEDDING_MODEL_ID} in the Hugging Face hub's layout, or let the service reach ${source.hubUrl} once (the model is then kept in ${source.cacheDir})`
      log(
        `The local language model is unavailable; analysing with the lexical analyzer instead (sentiment, and key phrases as topics). ${reason}`,
      )
      current = await lexical()
      status = { state: 'fallback', ...current.info, reason }
    },
  )
  const analyzer: Analyzer = {
    get info() {
      return current?.info ?? { name: status.name, version: status.version }
    },
    get semantic() {
      return current?.semantic
    },
    ready,
    status: () => status,
    async analyzeMessages(messages, context, signal) {
      await ready
      return current!.analyzeMessages(messages, context, signal)
    },
    async close() {
      // A shutdown does not wait for the model to load: its threads end between two model calls.
      closing = true
      stopLoading()
      await ready.catch(() => {})
      await current?.close?.()
    },
    threadStats: async () => (await current?.threadStats?.()) ?? [],
  }
  return analyzer
}

/**
 * The analyzer in /readyz (`details.analyzer`) and the metrics: never unready (the lexical fallback
 * analyses too), but it says which analyzer is in use and, on fallback, why and how to get the model.
 */
export function analyzerStatus(analyzer: Analyzer): AnalyzerStatus {
  return analyzer.status?.() ?? { state: 'ready', ...analyzer.info }
}

export function analyzerReadiness(analyzer: Analyzer) {
  return { name: 'analyzer', check: async () => {}, detail: () => analyzerStatus(analyzer) }
}
