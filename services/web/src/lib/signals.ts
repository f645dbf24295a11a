import { shortText } from './cut-text.ts'
import { formatNumber, NO_END_USER_MESSAGE } from './format.ts'

/** How the dashboard names the conversation signals (docs/analysis.md, "Conversation signals"). */
export const SIGNAL_NAMES: Record<string, string> = {
  escalation: 'Escalation',
  bot_failure: 'Bot failure',
  repetition: 'Repetition',
  frustration: 'Frustration',
  resolution: 'Resolution',
  abandonment: 'Abandonment',
}

/** What each built-in signal means, in a sentence. */
export const SIGNAL_MEANINGS: Record<string, string> = {
  escalation: 'The end user asked for a person, or the bot handed over.',
  bot_failure: 'The bot said it cannot help, did not understand or has no answer.',
  repetition: 'The end user asked the same thing again, or the bot kept asking to rephrase.',
  frustration: 'Anger, annoyance or disappointment aimed at the service.',
  resolution: 'The end user confirmed it worked, or thanked at the end.',
  abandonment: 'Quiet since an unanswered end-user message or a bot failure, without resolution.',
}

export function signalName(s: { name: string; label?: string | null }): string {
  return SIGNAL_NAMES[s.name] ?? s.label ?? s.name.replace(/^custom:/, '')
}

/**
 * The name of the signal a list is filtered by: a custom signal by its label as the listed
 * conversations carry it ("Asks for a discount", not "asks-for-a-discount"), its slug while none does.
 */
export function filterSignalName(
  signal: string,
  conversations: readonly { signals: readonly { name: string; label: string | null }[] }[],
): string {
  const label = conversations.flatMap((c) => c.signals).find((s) => s.name === signal)?.label
  return signalName({ name: signal, label })
}

/**
 * Who confirmed a signal the local model found borderline, as the dashboard says it: "refined by
 * gpt-4o-mini" for `refinedBy: "llm:gpt-4o-mini"` (docs/analysis.md, "LLM refinement"); null for a
 * signal the local model alone decided.
 */
export function refinedByText(s: { refinedBy?: string | null }): string | null {
  if (!s.refinedBy) return null
  return `refined by ${s.refinedBy.replace(/^llm:/, '') || s.refinedBy}`
}

/** A rate (0..1) as a percentage with one decimal. */
export function percent(rate: number): string {
  return `${(rate * 100).toFixed(1)} %`
}

/**
 * A rate as the Analytics page says it: with, when fewer conversations were checked for the signal than
 * there are (it was added or turned on later), over how many.
 */
export function checkedShare(rate: number, checked: number, conversations: number): string {
  if (checked === conversations) return percent(rate)
  return `${percent(rate)} of ${formatNumber(checked)} checked`
}

/** Needs attention's count of a topic's bot failures, over its conversations checked for bot failure. */
export function failuresOf(t: {
  botFailures: number
  conversations: number
  conversationsChecked: number
  botFailureRate: number
}): string {
  const checked = t.conversationsChecked < t.conversations ? ' checked for it' : ''
  return `the bot failed in ${formatNumber(t.botFailures)} of ${formatNumber(t.conversationsChecked)} conversations${checked} (${percent(t.botFailureRate)})`
}

/** The most characters of an example's excerpt a Needs attention link shows (the preview has 160). */
export const EXAMPLE_EXCERPT_CHARS = 60

/**
 * What a Needs attention example's link says, for a support lead to choose which to open: the end user's
 * first message in the topic and when the conversation started ("“My card never arrived” · 12 Nov 2026, 14:03"), the
 * date as `formatDate` writes it (the page's: the viewer's locale and time zone).
 */
export function exampleLinkText(
  example: { excerpt: string | null; firstMessageAt: string },
  formatDate: (iso: string) => string,
): string {
  const words =
    example.excerpt === null
      ? NO_END_USER_MESSAGE
      : `\u201c${shortText(example.excerpt, EXAMPLE_EXCERPT_CHARS)}\u201d`
  return `${words} \u00b7 ${formatDate(example.firstMessageAt)}`
}

/**
 * What the Analytics page says of the range's conversations whose abandonment is still to be decided
 * (the report's abandonmentPending: still within their chatbot's quiet period since their last message),
 * so that an abandonment count that rises after the status reads up to date is expected; null when none
 * waits. The time as `formatDate` writes it (the page's).
 */
export function abandonmentPendingText(
  pending: { conversations: number; nextDueAt: string | null; quietPeriodMinutes: number | null },
  formatDate: (iso: string) => string,
): string | null {
  const n = pending.conversations
  if (n === 0) return null
  const period =
    pending.quietPeriodMinutes === null
      ? "their chatbot's quiet period"
      : `the ${formatNumber(pending.quietPeriodMinutes)}-minute quiet period`
  const one = n === 1
  const next = pending.nextDueAt
    ? ` ${one ? 'It' : 'The first'} is decided from ${formatDate(pending.nextDueAt)}.`
    : ''
  return `${formatNumber(n)} ${one ? 'conversation is' : 'conversations are'} still within ${period}; ${one ? 'its' : 'their'} abandonment is not yet decided.${next}`
}
