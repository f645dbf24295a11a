import type { ChatbotSignalSettings } from '@cas/settings'
import type { MessageToAnalyze, SemanticAbilities } from '../analyzer.ts'
import type { Vector } from '../topics/vectors.ts'
import {
  type CustomExamples,
  cuesFrom,
  embedSignalAnchors,
  type ScoredMessage,
  type SignalAnchors,
  unitsOf,
} from './cues.ts'

/** What scoring a job's messages needs embedded, and how its cues then follow from those embeddings. */
export interface PreparedCues {
  /** The messages' units (cues.ts's unitsOf), in order: to embed with the analyzer's model. */
  readonly texts: readonly string[]
  /** The cues of each message, given the embeddings of `texts`. */
  cues(embeddings: readonly Vector[]): (ScoredMessage | undefined)[]
}

/**
 * Scores messages for the signals with the analyzer's language model (its cached embeddings, in its
 * threads): the anchors are embedded once, a chatbot's own signals' examples as they come (cached by
 * the analyzer). Without the language model (the lexical or LLM analyzer) there are no cues: only the
 * structure decides (abandonment of an unanswered conversation).
 */
export class SignalScorer {
  private anchors: Promise<SignalAnchors> | undefined

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
    this.anchors ??= embedSignalAnchors(embed)
    this.anchors.catch(() => {
      this.anchors = undefined
    })
    const anchors = await this.anchors
    const custom: CustomExamples[] = []
    for (const c of settings?.custom ?? []) {
      custom.push({ name: c.name, examples: await embed(c.examples) })
    }
    const units = messages.map(unitsOf)
    return {
      texts: units.flat(),
      cues: (embeddings) => cuesFrom(messages, units, embeddings, anchors, custom),
    }
  }
}
