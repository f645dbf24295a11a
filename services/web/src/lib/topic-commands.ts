import type { TopicCommandEntry } from '../api/types.ts'

/** A topic's name in a sentence: its label as of now, else what the command gave it. */
const nameOf = (label: string | null, fallback: string) => `'${label ?? fallback}'`

/** A command in words: "Merge of 'Refunds' into 'Billing'", "Rename 'refund, money back' to 'Refunds'". */
export function describeTopicCommand(c: TopicCommandEntry): string {
  const topic = nameOf(c.topicLabel, c.label ?? 'a topic no longer listed')
  switch (c.type) {
    case 'rename':
      // The label the topic had when the rename was sent, kept after it is gone. Renames sent before it
      // was recorded have none: the topic's label as of now names it, unless it is the new one already.
      if (c.previousLabel !== null && c.previousLabel !== c.label)
        return `Rename '${c.previousLabel}' to '${c.label}'`
      return c.topicLabel && c.topicLabel !== c.label
        ? `Rename of ${topic} to '${c.label}'`
        : `Rename to '${c.label}'`
    case 'hide':
      return `Hiding ${topic}`
    case 'unhide':
      return `Showing ${topic} again`
    case 'merge':
      return `Merge of ${topic} into ${nameOf(c.intoLabel, 'a topic no longer listed')}`
    case 'create':
      return `Creation of '${c.label}'`
  }
}

/** Why the analysis refused a command, in words (the API's reason codes; an unknown one as given). */
const REASONS: Record<string, string> = {
  not_found: 'the analysis no longer has this topic',
  gone: 'by then the topic had been merged into another or retired by re-clustering',
  configured: "it is one of the chatbot's own topics: change it in the chatbot's settings",
  label_taken: 'by then another topic had this label',
  bad_target: 'by then the topic to merge into had been merged away or retired',
  no_language_model: 'creating a topic needs the language model, and the analysis is not running it',
  exists: 'a topic with this id exists already',
  too_few_examples: 'fewer than two of the examples were usable',
}

export type TopicCommandTone = 'pending' | 'done' | 'refused'

/** What became of a command, in words, and how it is marked. */
export function topicCommandStatus(c: TopicCommandEntry): { text: string; tone: TopicCommandTone } {
  switch (c.status) {
    case 'pending':
      return { text: 'Pending: the analysis has not applied it yet', tone: 'pending' }
    case 'applied':
      return { text: appliedText(c), tone: 'done' }
    case 'unchanged':
      return { text: 'No change: there was nothing left to do', tone: 'done' }
    case 'refused':
      return {
        text: `Refused: ${c.reason ? (REASONS[c.reason] ?? c.reason) : 'the topics did not allow it'}`,
        tone: 'refused',
      }
    case 'failed':
      return { text: 'Failed: the analysis could not apply it; send it again', tone: 'refused' }
  }
}

/**
 * An applied command; a creation says how many requests moved into its topic (trial2: one that moved
 * none said only "Done", and the Topics page, listing topics with conversations, did not show it).
 */
function appliedText(c: TopicCommandEntry): string {
  if (c.type !== 'create' || c.moved === null) return 'Done'
  if (c.moved === 0)
    return "Done, but no request moved into it: no recent request lies near enough the examples, or those that do are in the chatbot's own topics (set in its settings), which keep theirs. Later requests like them will join it."
  return `Done: ${c.moved === 1 ? '1 request' : `${c.moved} requests`} moved into it`
}

/** Who sent a command: their name, else their email, else nobody signed in. */
export function topicCommandActor(c: TopicCommandEntry): string | undefined {
  return c.actor ? (c.actor.name ?? c.actor.email ?? 'a former member') : undefined
}
