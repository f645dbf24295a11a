/**
 * The analyzer port: what the analysis service needs from a sentiment-and-topics provider. Two providers
 * implement it (providers/local.ts, the default, and providers/llm.ts); config picks one.
 */

export type MessageRole = 'user' | 'assistant' | 'system' | 'tool'
export type SentimentLabel = 'positive' | 'neutral' | 'negative'

export interface MessageToAnalyze {
  readonly id: string
  readonly role: MessageRole
  readonly content: string
}

export interface Sentiment {
  /** -1 most negative … 1 most positive. */
  readonly score: number
  readonly label: SentimentLabel
}

export interface MessageAnalysis {
  readonly messageId: string
  readonly sentiment: Sentiment
  /** Short lowercase topic labels, most relevant first; at most 5. */
  readonly topics: readonly string[]
}

export interface AnalyzerInfo {
  /** e.g. 'local-lexicon' or 'llm:gpt-4o-mini'. */
  readonly name: string
  /** Changes whenever results could change (library, lexicon, prompt or model version). */
  readonly version: string
}

export interface AnalysisContext {
  /**
   * The chatbot's own topic list from settings.topics: label → keywords. A message mentioning a keyword
   * (case-insensitive, whole word) is given that label as a topic.
   */
  readonly topics?: Readonly<Record<string, readonly string[]>>
}

export interface Analyzer {
  readonly info: AnalyzerInfo
  /**
   * Analyzes a batch of messages of one conversation; returns exactly one result per message, in order.
   * Throws AnalyzerError on failure (retryable or not).
   */
  analyzeMessages(
    messages: readonly MessageToAnalyze[],
    context: AnalysisContext,
    signal?: AbortSignal,
  ): Promise<MessageAnalysis[]>
}

/** A failed analysis: `retryable` says whether trying the same input again may succeed. */
export class AnalyzerError extends Error {
  constructor(
    readonly code: 'timeout' | 'rate_limited' | 'provider_error' | 'malformed_response' | 'invalid_input',
    message: string,
    readonly retryable: boolean,
  ) {
    super(message)
    this.name = 'AnalyzerError'
  }
}

/** VADER's convention: compound ≥ 0.05 positive, ≤ -0.05 negative, neutral between. */
export function labelFor(score: number): SentimentLabel {
  if (score >= 0.05) return 'positive'
  if (score <= -0.05) return 'negative'
  return 'neutral'
}
