import type { ChatbotSignalSettings } from '@cas/settings'
import type { MessageAnalysis, MessageToAnalyze, SemanticAbilities } from '../analyzer.ts'
import type { Vector } from '../topics/vectors.ts'
import {
  type BuiltinAnchors,
  type CustomExamples,
  cuesFrom,
  embedBuiltinAnchors,
  embedCustomSignal,
  type ScoredMessage,
  type SignalAnchors,
  unitsOf,
  withGenericRequests,
} from './cues.ts'

/** What scoring a job's messages needs embedded, and how its cues then follow from those embeddings. */
export interface PreparedCues {
  /** The messages' units (cues.ts's unitsOf), in order: to embed with the analyzer's model. */
  readonly texts: readonly string[]
  /**
   * The cues of each message, given the embeddings of `texts`, and the analysis of each message when it came
   * with its whole text's similarities to the social and request anchors (MessageAnalysis.anchorSimilarities):
   * those are not computed again.
   */
  cues(
    embeddings: readonly Vector[],
    analysed?: readonly Pick<MessageAnalysis, 'anchorSimilarities'>[],
  ): (ScoredMessage | undefined)[]
}

/**
 * Scores messages for the signals with the analyzer's language model (its cached embeddings, in its
 * threads): the anchors are embedded once, a chatbot's own signals' labels and examples as they come (cached by
 * the analyzer), and the learned frustration and escalation heads read on each unit of an end user's message. Without the language model (the lexical or LLM analyzer) there are no cues: only the
 * structure decides (abandonment of an unanswered conversation).
 */
export class SignalScorer {
  private anchors: Promise<BuiltinAnchors> | undefined
  /**
   * The anchors with the chatbots' own signals' generic background (150 texts), embedded when a chatbot
   * first has signals of its own: a service whose chatbots have none never asks the model for them.
   */
  private withGeneric: Promise<SignalAnchors> | undefined
  /**
   * The cues of texts scored before, by role and text: a message's cues depend on nothing else (its
   * units' vectors are a function of its text, the model embedding each text alone), except an end
   * user's on the chatbot's own signals, which are never kept. Bots repeat their replies, end users their
   * greetings and thanks: those are not scored again (nor their units sent to the model's thread).
   */
  private readonly known = new Map<string, ScoredMessage | undefined>()

  constructor(private readonly semantic: SemanticAbilities) {}

  async score(
    messages: readonly MessageToAnalyze[],
    settings: ChatbotSignalSettings | undefined,
  ): Promise<(ScoredMessage | undefined)[]> {
    const prepared = await this.prepare(messages, settings)
    return prepared.cues(await this.semantic.embedTexts(prepared.texts))
  }

  /**
   * The texts to embed for the messages' cues (embedded with the analysis: SemanticAbilities.analyzeAndEmbed),
   * once the anchors and the chatbot's own signals' examples are embedded.
   */
  async prepare(
    messages: readonly MessageToAnalyze[],
    settings: ChatbotSignalSettings | undefined,
  ): Promise<PreparedCues> {
    const embed = (texts: readonly string[]) => this.semantic.embedTexts(texts)
    this.anchors ??= embedBuiltinAnchors(embed)
    this.anchors.catch(() => {
      this.anchors = undefined
    })
    const anchors = await this.anchors
    const custom: CustomExamples[] = []
    if ((settings?.custom ?? []).length > 0) {
      this.withGeneric ??= withGenericRequests(anchors, embed)
      this.withGeneric.catch(() => {
        this.withGeneric = undefined
      })
      const withGeneric = await this.withGeneric
      for (const c of settings?.custom ?? []) {
        custom.push(await embedCustomSignal(embed, c, withGeneric))
      }
    }
    const keys = messages.map((m) =>
      m.role === 'user' && custom.length > 0 ? undefined : `${m.role}\u0000${m.content}`,
    )
    const todo = messages.flatMap((_, i) => (keys[i] !== undefined && this.known.has(keys[i]) ? [] : [i]))
    const units = todo.map((i) => unitsOf(messages[i]!))
    return {
      texts: units.flat(),
      cues: (embeddings, analysed) => {
        // Given for the whole text the analyzer read: the cues' whole unit unless the text was cut (unitsOf).
        const given = todo.map((i, j) =>
          units[j]![0] === messages[i]!.content.trim() ? analysed?.[i]?.anchorSimilarities : undefined,
        )
        const fresh = cuesFrom(
          todo.map((i) => messages[i]!),
          units,
          embeddings,
          anchors,
          custom,
          this.semantic.frustrationOf,
          this.semantic.escalationOf,
          this.semantic.handoverOf,
          this.semantic.displeasureOf,
          given,
          this.semantic.gratitudeOf,
        )
        const out = keys.map((key) => (key === undefined ? undefined : this.known.get(key)))
        for (const [j, i] of todo.entries()) {
          out[i] = fresh[j]
          const key = keys[i]
          if (key === undefined) continue
          if (this.known.size >= KNOWN_CUES) this.known.delete(this.known.keys().next().value!)
          this.known.set(key, fresh[j])
        }
        return out
      },
    }
  }
}

/** Texts whose cues are kept (signals/scorer.ts): a few MB at most. */
const KNOWN_CUES = 5_000
