/**
 * The default analyzer: the local language model (embedding-model.ts) for what end users talk about and
 * how they feel. Per end user's message: its sentiment and emotions from the learned heads on its
 * embedding (learned-sentiment.ts, with the lexical score as one input); for an end user's request (the
 * model's judgement alone, topics/requests.ts: greetings, thanks and acknowledgements are not), its
 * sentence embedding and the terms a topic label may take from it (topics/terms.ts: they name topics, they
 * never decide whether a message is a request).
 * Assistant, system and tool messages get a sentiment only: they never make topics. The topics
 * themselves are decided by the analysis worker, per chatbot, from the embeddings (topics/topic-model.ts).
 */
import {
  type AnalysisContext,
  type Analyzer,
  AnalyzerError,
  type AnalyzerInfo,
  labelFor,
  type MessageAnalysis,
  type MessageToAnalyze,
  type SemanticAbilities,
} from '../analyzer.ts'
import { SIGNALS_VERSION } from '../signals/detect.ts'
import { poolClusters } from '../topics/agglomerative.ts'
import { REQUEST_ANCHORS, requestEmbeddings, TOPIC_SOCIAL_ANCHORS } from '../topics/requests.ts'
import { createTermExtractor } from '../topics/terms.ts'
import { cachedEmbedder } from './embedding-cache.ts'
import { type EmbeddingModel, loadEmbeddingModel, type ModelSource } from './embedding-model.ts'
import { loadLearnedSentiment } from './learned-sentiment.ts'
import { createSentimentScorer, SENTIMENT_VERSION } from './sentiment.ts'

export const SEMANTIC_ANALYZER_NAME = 'local-embedding'
/** Bump when this file's, topics/terms.ts's or topics/requests.ts's rules change results. */
const RULES_VERSION = 4
/** Embeddings kept by text, the least recently used dropped first (embedding-cache.ts). */
const EMBEDDING_CACHE_SIZE = 10_000

export interface SemanticAnalyzer extends Analyzer {
  readonly semantic: SemanticAbilities
  readonly model: EmbeddingModel
}

export async function createSemanticAnalyzer(source: ModelSource): Promise<SemanticAnalyzer> {
  const model = await loadEmbeddingModel(source)
  const sentiment = createSentimentScorer()
  const learned = loadLearnedSentiment()
  const extractor = createTermExtractor()
  // Once per analyzer: each message is then judged by a few dot products.
  const anchors = {
    social: await model.embed(TOPIC_SOCIAL_ANCHORS),
    request: await model.embed(REQUEST_ANCHORS),
  }

  const embedTexts = cachedEmbedder((texts) => model.embed(texts), EMBEDDING_CACHE_SIZE)

  const info: AnalyzerInfo = {
    name: SEMANTIC_ANALYZER_NAME,
    version: `${model.version}+sentiment:${SENTIMENT_VERSION}+${learned.version}+rules-v${RULES_VERSION}+signals-v${SIGNALS_VERSION}`,
  }
  return {
    info,
    model,
    status: () => ({ state: 'ready', ...info, loadMs: model.loadMs }),
    semantic: {
      model: model.version,
      embedTexts,
      frustrationOf: learned.frustration,
      escalationOf: learned.escalation,
      handoverOf: learned.handover,
      cluster: async (vectors, references) => poolClusters(vectors, references),
      async analyzeAndEmbed(messages, context, texts) {
        const results = await analyzeMessages(messages, context)
        return { results, embeddings: await embedTexts(texts) }
      },
    },
    analyzeMessages,
  }

  async function analyzeMessages(
    messages: readonly MessageToAnalyze[],
    _context: AnalysisContext,
    signal?: AbortSignal,
  ): Promise<MessageAnalysis[]> {
    for (const m of messages) {
      if (typeof m.content !== 'string') {
        throw new AnalyzerError('invalid_input', `message ${String(m.id)} has no text content`, false)
      }
    }
    const terms = messages.map((m) => (m.role === 'user' ? extractor.terms(m.content) : []))
    // Every end user's message with text is embedded: the learned sentiment reads its embedding.
    const users = messages.filter((m) => m.role === 'user' && m.content.trim() !== '')
    const own = new Map(users.map((m, i) => [m, i]))
    const userEmbeddings = await embedTexts(users.map((m) => m.content.trim()))
    // The model, not their words, says which ask for something: "ok cool" and "thanks, that solved it!"
    // do not, "what time is it?" does (issue 31). A message without a letter ("??", "👍") asks nothing.
    const toEmbed = messages.filter((m) => own.has(m) && /\p{L}/u.test(m.content))
    const texts = toEmbed.map((m) => m.content.trim())
    const placed = await requestEmbeddings(
      texts,
      toEmbed.map((m) => userEmbeddings[own.get(m)!]!),
      anchors,
      embedTexts,
    )
    if (signal?.aborted) throw new AnalyzerError('timeout', 'analysis aborted', true)
    const byMessage = new Map<MessageToAnalyze, Float32Array>(
      toEmbed.flatMap((m, i) => (placed[i] ? [[m, placed[i]] as const] : [])),
    )
    return messages.map((m, i): MessageAnalysis => {
      const embedding = byMessage.get(m)
      const lexical = sentiment.score(m.content)
      const at = own.get(m)
      // Assistant, system and tool messages keep the lexical score: the heads read end users.
      const read =
        at === undefined
          ? { sentiment: { score: lexical, label: labelFor(lexical) } }
          : learned.analyze(userEmbeddings[at]!, lexical)
      const result = { messageId: m.id, ...read, topics: [] }
      return embedding ? { ...result, embedding, terms: terms[i]! } : result
    })
  }
}
