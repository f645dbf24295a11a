/**
 * The analyzer port: what the analysis service needs from a sentiment-and-topics provider. Two providers
 * implement it (providers/local.ts, the default, and providers/llm.ts); config picks one.
 */

import type { ChatbotSignalSettings } from '@cas/settings'

export type MessageRole = 'user' | 'assistant' | 'system' | 'tool'
export type SentimentLabel = 'positive' | 'neutral' | 'negative'

export interface MessageToAnalyze {
  readonly id: string
  readonly role: MessageRole
  readonly content: string
  /** When it was sent (ISO 8601), as captured: the signals order a conversation by it. */
  readonly sentAt?: string
  /**
   * The conversation's turn just before this message when it is not the message before it in the batch
   * (the first message of a job: its turn came in an earlier capture, read from the stored conversation by
   * the job runner): the slot question it asked, if it asked one (MessageAnalysis.slotQuestion). Absent:
   * the message before it in the batch is its turn before (topics/answers.ts).
   */
  readonly turnBefore?: {
    readonly slotQuestion?: Float32Array
    /**
     * An end user's request of the conversation came before this message (it made a topic, or waits in
     * "other"): a request after it makes a topic only when it clearly asks (topics/requests.ts,
     * requestsMakingTopics). Read from the stored conversation like the slot question; absent: none did.
     */
    readonly requested?: boolean
  }
}

export interface Sentiment {
  /** -1 most negative … 1 most positive. */
  readonly score: number
  readonly label: SentimentLabel
}

/**
 * The emotions an end user's message is scored for (GoEmotions' names, Demszky et al. 2020): frustration
 * is anger, annoyance or disappointment (and disapproval); gratitude marks thanks.
 */
export const EMOTIONS = [
  'anger',
  'annoyance',
  'disappointment',
  'disapproval',
  'sadness',
  'fear',
  'confusion',
  'gratitude',
  'joy',
  'approval',
] as const
export type Emotion = (typeof EMOTIONS)[number]

/**
 * Per emotion a score in 0..1; 0.5 and above means the emotion is expressed (each emotion's threshold of
 * best F1 on GoEmotions' dev split, calibrated to 0.5). `frustration` (0..1, same reading) is anger,
 * annoyance or disappointment aimed at the service, a head of its own: complaints about the service are
 * frustration, a sad subject ("my card was stolen") is not.
 */
export type Emotions = Readonly<Record<Emotion | 'frustration', number>>

export interface MessageAnalysis {
  readonly messageId: string
  readonly sentiment: Sentiment
  /**
   * The local language model's, for end users' messages only: emotion scores (providers/learned-sentiment.ts).
   * Absent from the lexical and LLM analyzers, and for assistant, system and tool messages.
   */
  readonly emotions?: Emotions
  /**
   * End users' messages only: the language detected in the text (language.ts: ISO 639-1, "und" when too
   * short to tell). Every analyzer gives it, in the thread it analyses in: the local analyzers' threads,
   * not the event loop that serves requests and consumes the event log.
   */
  readonly language?: string
  /**
   * Short lowercase topic labels, most relevant first; at most 5. Empty from a semantic analyzer, whose
   * topics the worker discovers from the embeddings (topics/topic-model.ts).
   */
  readonly topics: readonly string[]
  /**
   * A semantic analyzer's, for an end user's request (not a greeting, thanks or other social act, as the
   * model alone judges: topics/requests.ts): its sentence embedding (unit length) and the terms a topic
   * label can take from it (never empty: a request without a content word is named by its other words).
   */
  readonly embedding?: Float32Array
  readonly terms?: readonly string[]
  /**
   * A semantic analyzer's, for an assistant's message that asks the end user for a detail, a choice or a
   * go-ahead: the embedding of its most slot-like sentence (topics/answers.ts). Stored with the result: an
   * end user's answer captured later is judged against it, without the turn being embedded again.
   */
  readonly slotQuestion?: Float32Array
  /**
   * A semantic analyzer's, for an end user's message with a letter: the similarity of its whole text
   * (`content.trim()`) to each of signals/cues.ts's social anchors (SOCIAL_ANCHORS, in order) and request
   * anchors (REQUEST_ANCHORS), which the topics' request gate computed. The signal cues start from them
   * instead of computing them again (signals/scorer.ts). Not stored.
   */
  readonly anchorSimilarities?: {
    readonly social: Float64Array
    readonly request: Float64Array
  }
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
  /** The chatbot's signal settings (settings.signals): its own signals are scored with the model. */
  readonly signals?: ChatbotSignalSettings
}

/** What a semantic analyzer (the local language model) offers topic discovery besides its results. */
export interface SemanticAbilities {
  /** The embedding model's id and version: topics found with one model mean nothing to another. */
  readonly model: string
  /** Embeddings of short texts: the descriptions of the chatbot's own topics. */
  embedTexts(texts: readonly string[]): Promise<Float32Array[]>
  /**
   * analyzeMessages, then embedTexts(texts) (the signals' units of the same messages) in one request to
   * the model's thread: a job waits for the model once, not twice. The same results and embeddings as the
   * two calls one after the other.
   */
  analyzeAndEmbed(
    messages: readonly MessageToAnalyze[],
    context: AnalysisContext,
    texts: readonly string[],
  ): Promise<{ results: MessageAnalysis[]; embeddings: Float32Array[] }>
  /**
   * The learned frustration head (providers/learned-sentiment.ts) on one embedding of this model, 0..1:
   * the signals read it on each sentence of a message as well as on the whole (signals/cues.ts). A dot
   * product: computed in the calling thread.
   */
  frustrationOf(embedding: Float32Array): number
  /**
   * The learned escalation head (providers/learned-sentiment.ts) on one embedding of this model, 0..1,
   * read on each unit of an end user's message (signals/cues.ts); absent when the shipped model has none.
   * A dot product: computed in the calling thread.
   */
  readonly escalationOf?: ((embedding: Float32Array) => number) | undefined
  /**
   * The learned handover head (providers/learned-sentiment.ts) on one embedding of this model, 0..1, read
   * on each unit of an assistant's message (signals/cues.ts); absent when the shipped model has none.
   */
  readonly handoverOf?: ((embedding: Float32Array) => number) | undefined
  /**
   * signals-v37: the strongest of the learned emotion heads anger, annoyance and disappointment
   * (providers/learned-sentiment.ts) on one embedding of this model, 0..1, read on each unit of an end user's
   * message (signals/cues.ts). A dot product per head: computed in the calling thread.
   */
  readonly displeasureOf?: ((embedding: Float32Array) => number) | undefined
  /**
   * signals-v77: the learned emotion head gratitude (providers/learned-sentiment.ts) on one embedding of this
   * model, 0..1, read on the last sentence of an end user's message (signals/cues.ts). A dot product.
   */
  readonly gratitudeOf?: ((embedding: Float32Array) => number) | undefined
  /** The pool's clusters, their cut chosen by silhouette against the references (topics/agglomerative.ts), off the calling thread. */
  cluster(vectors: readonly Float32Array[], references: readonly Float32Array[]): Promise<number[]>
}

/** Which analyzer is in use, for the readiness output and the metrics. */
export interface AnalyzerStatus {
  /** loading: the model is being loaded; ready: in use; fallback: the model could not be had. */
  readonly state: 'loading' | 'ready' | 'fallback'
  readonly name: string
  readonly version: string
  /** fallback: why the model could not be loaded, and how to provide it. */
  readonly reason?: string
  /** ready: how long the model took to load, in ms. */
  readonly loadMs?: number
}

export interface Analyzer {
  /** The analyzer in use (once `ready` has resolved, for one that loads a model). */
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
  /** Present on the local language model: topic discovery is done with it. */
  readonly semantic?: SemanticAbilities
  /** Resolves once the analyzer can be used (a model loaded, or its fallback chosen); absent: at once. */
  readonly ready?: Promise<void>
  status?(): AnalyzerStatus
  /** Ends its threads. */
  close?(): Promise<void>
  /** Per analyzer thread, what it has done since it started (analyzer-threads.ts); absent in the calling thread. */
  threadStats?(): Promise<AnalyzerThreadStats[]>
}

/**
 * What an analyzer thread has done since it started: its event loop's time idle (waiting for requests)
 * and active (performance.eventLoopUtilization), its CPU time, and the time it was ready to run but waited
 * for a core (the scheduler's run-queue delay, /proc/thread-self/schedstat) (Linux; undefined elsewhere).
 * Active time that neither covers is time the thread was blocked (a lock, a page fault from disk).
 */
export interface AnalyzerThreadStats {
  readonly idleMs: number
  readonly activeMs: number
  readonly cpuMs: number | undefined
  readonly runQueueMs: number | undefined
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
