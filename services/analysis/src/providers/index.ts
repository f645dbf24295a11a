import type { Config } from '@cas/config'
import type { Analyzer } from '../analyzer.ts'
import { createLlmAnalyzer } from './llm.ts'
import { createLocalAnalyzer } from './local.ts'
import { createThreadedLocalAnalyzer } from './local-thread.ts'

/**
 * The analyzer ANALYSIS_PROVIDER names: the local lexicon (default, no network; in ANALYSIS_THREADS worker
 * threads, or in the caller's thread with 0) or an OpenAI-compatible LLM.
 */
export async function createAnalyzer(
  config: Config,
  log?: (msg: string, fields?: Record<string, unknown>) => void,
): Promise<Analyzer> {
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
  return config.ANALYSIS_THREADS > 0
    ? createThreadedLocalAnalyzer(config.ANALYSIS_THREADS)
    : createLocalAnalyzer()
}
