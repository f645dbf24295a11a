import {
  type AnalysisContext,
  type Analyzer,
  AnalyzerError,
  labelFor,
  type MessageAnalysis,
  type MessageToAnalyze,
} from '../src/analyzer.ts'
import { languageOf } from '../src/language.ts'

/**
 * A deterministic analyzer for the service's own tests (the real providers have theirs): a message's
 * score is read from its content (`score:0.5`), and content can script failures — `fail:retryable`,
 * `fail:fatal`, or `fail:2` (fails the first two calls that contain it, then succeeds), and an end user's
 * language (`lang:de`; else detected as the real analyzers do). `hold()` makes every call wait until `release()`.
 */
export class ScriptedAnalyzer implements Analyzer {
  calls = 0
  /** The context of every call, in order (a chatbot's own topics). */
  readonly contexts: AnalysisContext[] = []
  private readonly failuresSeen = new Map<string, number>()
  private gate: Promise<void> | undefined
  private open: (() => void) | undefined
  /** Messages containing this wait for release() (holdContaining). */
  private heldWord: string | undefined
  waiting = 0

  /** `scale` multiplies every score: a second version that judges differently. */
  constructor(
    readonly info = { name: 'scripted', version: 'test-1' },
    private readonly scale = 1,
  ) {}

  hold(): void {
    this.gate = new Promise((resolve) => {
      this.open = resolve
    })
  }

  /** Like hold(), for the calls with a message containing `word` only. */
  holdContaining(word: string): void {
    this.hold()
    this.heldWord = word
  }

  release(): void {
    this.open?.()
    this.gate = undefined
    this.heldWord = undefined
  }

  async analyzeMessages(
    messages: readonly MessageToAnalyze[],
    context: AnalysisContext = {},
  ): Promise<MessageAnalysis[]> {
    this.calls++
    this.contexts.push(context)
    const word = this.heldWord
    if (this.gate && (word === undefined || messages.some((m) => m.content.includes(word)))) {
      this.waiting++
      await this.gate
      this.waiting--
    }
    for (const m of messages) {
      if (m.content.includes('fail:retryable'))
        throw new AnalyzerError('provider_error', 'scripted failure', true)
      if (m.content.includes('fail:fatal'))
        throw new AnalyzerError('invalid_input', 'scripted refusal', false)
      const times = m.content.match(/fail:(\d+)/)
      if (times) {
        const seen = this.failuresSeen.get(m.id) ?? 0
        if (seen < Number(times[1])) {
          this.failuresSeen.set(m.id, seen + 1)
          throw new AnalyzerError('rate_limited', 'scripted 429', true)
        }
      }
    }
    return messages.map((m) => {
      const score = Number(m.content.match(/score:(-?[\d.]+)/)?.[1] ?? 0) * this.scale
      const topics = [...m.content.matchAll(/#(\w+)/g)].map((t) => t[1]!.toLowerCase())
      // An end user's language as the real analyzers detect it, unless the content scripts one (`lang:de`).
      const scripted = m.content.match(/lang:([a-z]{2,3})/)?.[1]
      const language = m.role === 'user' && scripted ? { language: scripted } : languageOf(m)
      return { messageId: m.id, sentiment: { score, label: labelFor(score) }, topics, ...language }
    })
  }
}
