import type { ChatbotSignalSettings } from '@cas/settings'
import type { MessageToAnalyze, SemanticAbilities } from '../analyzer.ts'
import type { Vector } from '../topics/vectors.ts'
import { cuesOf, embedSignalAnchors, type ScoredMessage, type SignalAnchors } from './cues.ts'

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
    const embed = (texts: readonly string[]) => this.semantic.embedTexts(texts)
    this.anchors ??= embedSignalAnchors(embed)
    this.anchors.catch(() => {
      this.anchors = undefined
    })
    const anchors = await this.anchors
    const custom: { name: string; examples: Vector[] }[] = []
    for (const c of settings?.custom ?? []) {
      custom.push({ name: c.name, examples: await embed(c.examples) })
    }
    return cuesOf(messages, anchors, embed, custom)
  }
}
