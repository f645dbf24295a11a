/**
 * The default analyzer: the local language model (embedding-model.ts) for what end users talk about and
 * how they feel. Per end user's message: its sentiment and emotions from the learned heads on its
 * embedding (learned-sentiment.ts, with the lexical score as one input); for an end user's request (the
 * model's judgement alone, topics/requests.ts: greetings, thanks and acknowledgements are not), its
 * sentence embedding and the terms a topic label may take from it (topics/terms.ts: they name topics, they
 * never decide whether a message is a request).
 * Assistant, system and tool messages get a sentiment only: they never make topics; an assistant's that asks
 * the end user for a detail also gets its slot question, and the answer after it makes no topic
 * (topics/answers.ts). The topics
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
import { languageOf } from '../language.ts'
import { unitsOf } from '../signals/cues.ts'
import { SIGNALS_VERSION } from '../signals/detect.ts'
import { poolClusters } from '../topics/agglomerative.ts'
import {
  ANSWER_ANCHORS,
  answersToSlotQuestions,
  askedSlot,
  askingUnits,
  OPEN_TURN_ANCHORS,
  REPLY_REQUEST_ANCHORS,
  SLOT_QUESTION_ANCHORS,
} from '../topics/answers.ts'
import { ownPlanClausesOf } from '../topics/own-plans.ts'
import {
  clauseAsks,
  FOLLOW_UP_MARGIN,
  gateSimilarities,
  REQUEST_ANCHORS,
  requestEmbeddings,
  requestsMakingTopics,
  SOCIAL_ANCHORS,
  TOPIC_SOCIAL_ANCHORS,
} from '../topics/requests.ts'
import { createTermExtractor } from '../topics/terms.ts'
import { cachedEmbedder } from './embedding-cache.ts'
import { type EmbeddingModel, loadEmbeddingModel, type ModelSource } from './embedding-model.ts'
import { loadLearnedSentiment } from './learned-sentiment.ts'
import { createSentimentScorer, SENTIMENT_VERSION } from './sentiment.ts'

export const SEMANTIC_ANALYZER_NAME = 'local-embedding'
/**
 * Bump when this file's, topics/terms.ts's, topics/requests.ts's or topics/answers.ts's rules change
 * results. 5 was the answers rule reading the bot's turn from the same capture only (reverted): not reused.
 * 10: a label of stop words named by its noun or verb (terms.ts), a later request asking in a clause (topics9).
 * 11: give-ups and dismissals among the topic gate's social anchors (requests.ts GIVE_UP_ANCHORS, topics16).
 * 12: the end user's own plan to reach someone another way asks in no clause (topics/own-plans.ts, topics19).
 * 13: a message in another language than English loses that language's function words from its terms (lang2).
 * 14: the end user's own plan to try, wait, check, ask someone else or do it elsewhere asks in no clause (own-plans.ts, topics20).
 * 15: a message over 300 characters is read sentence by sentence for its clauses (requests.ts clausesOf, topics20).
 * 16: another language's thanks, greeting or farewell asks nothing (topics/social-formulas.ts, topics21).
 */
const RULES_VERSION = 16
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
  const replyAnchors = {
    slot: await model.embed(SLOT_QUESTION_ANCHORS),
    open: await model.embed(OPEN_TURN_ANCHORS),
    answer: await model.embed(ANSWER_ANCHORS),
    request: await model.embed(REPLY_REQUEST_ANCHORS),
  }
  // REPLY_REQUEST_ANCHORS are REQUEST_ANCHORS and then requests of other kinds: the gate reads the latter apart.
  const gateAnchors = { ...anchors, otherRequest: replyAnchors.request.slice(REQUEST_ANCHORS.length) }

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
      displeasureOf: learned.displeasure,
      gratitudeOf: learned.gratitude,
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
    // Each end user's language, for the result and for its terms: another language's function words are
    // no terms (terms.ts).
    const languages = messages.map(languageOf)
    // Every end user's message with text is embedded: the learned sentiment reads its embedding.
    const users = messages.filter((m) => m.role === 'user' && m.content.trim() !== '')
    const own = new Map(users.map((m, i) => [m, i]))
    // And, in the same call, the bot's turns' units (the very texts the signals embed next, then cached:
    // no text more, no call more): whether a turn asks for a detail is decided once, here, from those of
    // its units that may ask (topics/answers.ts).
    const bots = messages.filter((m) => m.role === 'assistant')
    const botUnits = bots.map(unitsOf)
    const vectors = await embedTexts([...users.map((m) => m.content.trim()), ...botUnits.flat()])
    const userEmbeddings = vectors.slice(0, users.length)
    let from = users.length
    const slotQuestions = new Map<MessageToAnalyze, Float32Array>()
    for (const [k, m] of bots.entries()) {
      const units = botUnits[k]!
      const vectorOf = new Map(units.map((u, j) => [u, vectors[from + j]!]))
      from += units.length
      const question = askedSlot(
        askingUnits(m.content).map((u) => vectorOf.get(u)!),
        replyAnchors,
      )
      if (question) slotQuestions.set(m, question)
    }
    // The model, not their words, says which ask for something: "ok cool" and "thanks, that solved it!"
    // do not, "what time is it?" does (issue 31). A message without a letter ("??", "👍") asks nothing.
    const toEmbed = messages.filter((m) => own.has(m) && /\p{L}/u.test(m.content))
    const texts = toEmbed.map((m) => m.content.trim())
    const similarities = toEmbed.map((m) => gateSimilarities(userEmbeddings[own.get(m)!]!, gateAnchors))
    const placed = await requestEmbeddings(
      texts,
      toEmbed.map((m) => userEmbeddings[own.get(m)!]!),
      gateAnchors,
      embedTexts,
      similarities,
      ownPlanClausesOf,
    )
    // A request read alone may answer the bot's question just before it ("Tuesday, 10 if possible" after
    // "which suits you?"): no topic of its own (rules-v6). The turn before a job's first message is the
    // stored conversation's (turnBefore); before any other, the message before it in the batch.
    const index = new Map(messages.map((m, i) => [m, i]))
    const askedBefore = (m: MessageToAnalyze): Float32Array | undefined => {
      if (m.turnBefore) return m.turnBefore.slotQuestion
      const before = messages[index.get(m)! - 1]
      return before ? slotQuestions.get(before) : undefined
    }
    const requests = toEmbed.flatMap((m, i) => (placed[i] && askedBefore(m) ? [i] : []))
    const answers = await answersToSlotQuestions(
      requests.map((i) => texts[i]!),
      requests.map((i) => userEmbeddings[own.get(toEmbed[i]!)!]!),
      requests.map((i) => askedBefore(toEmbed[i]!)),
      replyAnchors,
      embedTexts,
    )
    for (const [k, i] of requests.entries()) if (answers[k]) placed[i] = undefined
    // A request after the conversation's first (in this batch, or stored from an earlier capture) makes a
    // topic only when it clearly asks: "ordered, thanks" and "done. still nothing" make none (rules-v7).
    // A batch may hold several conversations' jobs: each job's first message carries its turnBefore.
    const embeddedAt = new Map(toEmbed.map((m, i) => [m, i]))
    const gateInput = () =>
      messages.map((m) => ({
        margin: embeddedAt.has(m) ? placed[embeddedAt.get(m)!]?.margin : undefined,
        requestedBefore: m.turnBefore ? m.turnBefore.requested === true : undefined,
      }))
    // A later request that asks as a whole makes a topic only when one of its clauses asks too: "done, the
    // light is blue now. thanks!" makes none (clauseAsks). Only those are split: a first request never is.
    const first = requestsMakingTopics(gateInput(), -Infinity)
    const later = toEmbed.flatMap((m, i) => {
      const p = placed[i]
      return p && !p.byClauses && p.margin < FOLLOW_UP_MARGIN && !first[index.get(m)!] ? [i] : []
    })
    // Clauses read until one asks under FOLLOW_UP_MARGIN: the decision below compares with that bound only.
    // The end user's own plan to reach someone another way asks in none ("whatever, I'll call": own-plans.ts).
    const clauses = await clauseAsks(
      later.map((i) => texts[i]!),
      gateAnchors,
      embedTexts,
      FOLLOW_UP_MARGIN,
      ownPlanClausesOf,
    )
    for (const [k, i] of later.entries()) {
      const least = clauses[k]
      if (least !== undefined) placed[i] = { ...placed[i]!, margin: Math.max(placed[i]!.margin, least) }
    }
    const makesTopic = requestsMakingTopics(gateInput())
    if (signal?.aborted) throw new AnalyzerError('timeout', 'analysis aborted', true)
    const byMessage = new Map<MessageToAnalyze, Float32Array>(
      toEmbed.flatMap((m, i) => (makesTopic[index.get(m)!] ? [[m, placed[i]!.embedding] as const] : [])),
    )
    // The gate's similarities of the whole message to the social and request anchors, for the signal cues
    // (signals/cues.ts reads the same anchors: SOCIAL_ANCHORS are TOPIC_SOCIAL_ANCHORS' first).
    const social = (s: Float64Array) => s.subarray(0, SOCIAL_ANCHORS.length)
    const request = (s: Float64Array) =>
      s.subarray(TOPIC_SOCIAL_ANCHORS.length, TOPIC_SOCIAL_ANCHORS.length + REQUEST_ANCHORS.length)
    const gated = new Map(
      toEmbed.map((m, i) => [m, { social: social(similarities[i]!), request: request(similarities[i]!) }]),
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
      const question = slotQuestions.get(m)
      const anchorSimilarities = gated.get(m)
      const result = {
        messageId: m.id,
        ...read,
        ...languages[i],
        topics: [],
        ...(question ? { slotQuestion: question } : {}),
        ...(anchorSimilarities ? { anchorSimilarities } : {}),
      }
      // The terms only for a message that makes a topic (they name topics): greetings, thanks and follow-ups
      // were read by the tagger for nothing.
      return embedding
        ? { ...result, embedding, terms: extractor.terms(m.content, languages[i]!.language) }
        : result
    })
  }
}
