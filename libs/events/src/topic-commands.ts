/**
 * Commands on a chatbot's topics (issue 31, item 6), the pure decision: the chatbot's topics and one
 * command in, the analysis events and the topics' changes out. Owners and admins rename a topic (its label
 * is then pinned), hide or unhide one, and merge one into another. Two sides decide with it: the gateway,
 * on the topics as the read model shows them with the commands still pending folded in
 * (foldPendingTopicCommands), refuses what it can already see is wrong and commits the command as a
 * chatbot.topic-*-requested event; the analysis service, on its own topic state (which may have moved on
 * meanwhile), decides again when it applies that event, and its events and changes are what happens (a
 * command it refuses then changes nothing, and its analysis.topic-command-handled says why).
 *
 * - The chatbot's own topics (settings.topics) win: they are renamed there, never here, and never merged
 *   away (another topic may be merged into one).
 * - No two topics of a chatbot share a label (case aside).
 * - A merge's target is pinned too: re-clustering leaves pinned topics and their members as they are
 *   (services/analysis/src/topics/recluster.ts), so that the next run never undoes the merge.
 * - A command that changes nothing (hide a hidden topic, rename to its pinned label) produces no event.
 */
export type TopicCommand =
  | { readonly type: 'rename'; readonly label: string }
  | { readonly type: 'hide' }
  | { readonly type: 'unhide' }
  | { readonly type: 'merge'; readonly into: string }

/** A topic as the decision needs it (the analysis service's topic_clusters, or the read model's rm_topics). */
export interface TopicRow {
  readonly id: string
  readonly label: string
  readonly configured: boolean
  readonly mergedInto: string | null
  readonly retired: boolean
  readonly pinned: boolean
  readonly hidden: boolean
}

export type TopicCommandEvent =
  | { readonly type: 'analysis.topic-renamed-by-user'; readonly payload: { topicId: string; label: string } }
  | { readonly type: 'analysis.topic-hidden'; readonly payload: { topicId: string } }
  | { readonly type: 'analysis.topic-unhidden'; readonly payload: { topicId: string } }
  | { readonly type: 'analysis.topic-merged-by-user'; readonly payload: { topicId: string; into: string } }

export interface TopicChange {
  readonly id: string
  readonly label?: string
  readonly pinned?: boolean
  readonly hidden?: boolean
  /** This topic is merged into that one. */
  readonly mergedInto?: string
}

export type TopicRefusal =
  | { readonly reason: 'not_found' }
  | { readonly reason: 'gone'; readonly message: string }
  | { readonly reason: 'configured' }
  | { readonly reason: 'label_taken'; readonly other: string }
  | { readonly reason: 'bad_target'; readonly message: string }

export type TopicDecision =
  | { readonly ok: true; readonly events: TopicCommandEvent[]; readonly changes: TopicChange[] }
  | ({ readonly ok: false } & TopicRefusal)

/** Labels compared as a reader sees them: case aside, and in one Unicode form (NFKC: "Ｒｅｆｕｎｄｓ" is "Refunds"). */
export const labelKey = (label: string): string => label.normalize('NFKC').trim().toLowerCase()
const sameLabel = (a: string, b: string) => labelKey(a) === labelKey(b)

/** The topic (not merged away nor retired) that has this label, case aside: no two topics share one. */
export function topicWithLabel(topics: ReadonlyMap<string, TopicRow>, label: string): TopicRow | undefined {
  return [...topics.values()].find(
    (t) => goneMessage(t) === undefined && sameLabel(t.label, tidyLabel(label)),
  )
}

export function decideTopicCommand(
  topics: ReadonlyMap<string, TopicRow>,
  topicId: string,
  command: TopicCommand,
): TopicDecision {
  const topic = topics.get(topicId)
  if (!topic) return { ok: false, reason: 'not_found' }
  const gone = goneMessage(topic)
  if (gone) return { ok: false, reason: 'gone', message: gone }
  switch (command.type) {
    case 'rename': {
      if (topic.configured) return { ok: false, reason: 'configured' }
      const label = tidyLabel(command.label)
      const other = [...topics.values()].find(
        (t) => t.id !== topic.id && goneMessage(t) === undefined && sameLabel(t.label, label),
      )
      if (other) return { ok: false, reason: 'label_taken', other: other.id }
      if (topic.pinned && topic.label === label) return { ok: true, events: [], changes: [] }
      return {
        ok: true,
        events: [{ type: 'analysis.topic-renamed-by-user', payload: { topicId, label } }],
        changes: [{ id: topicId, label, pinned: true }],
      }
    }
    case 'hide':
    case 'unhide': {
      const hidden = command.type === 'hide'
      if (topic.hidden === hidden) return { ok: true, events: [], changes: [] }
      return {
        ok: true,
        events: [
          { type: hidden ? 'analysis.topic-hidden' : 'analysis.topic-unhidden', payload: { topicId } },
        ],
        changes: [{ id: topicId, hidden }],
      }
    }
    case 'merge': {
      if (topic.configured) return { ok: false, reason: 'configured' }
      const into = topics.get(command.into)
      if (command.into === topicId) {
        return { ok: false, reason: 'bad_target', message: 'A topic cannot be merged into itself.' }
      }
      if (!into) return { ok: false, reason: 'bad_target', message: 'The chatbot has no topic with this id.' }
      const intoGone = goneMessage(into)
      if (intoGone) return { ok: false, reason: 'bad_target', message: intoGone }
      return {
        ok: true,
        events: [{ type: 'analysis.topic-merged-by-user', payload: { topicId, into: into.id } }],
        changes: [
          { id: topicId, mergedInto: into.id },
          { id: into.id, pinned: true },
        ],
      }
    }
  }
}

function goneMessage(t: TopicRow): string | undefined {
  if (t.mergedInto !== null) return `This topic was merged into ${t.mergedInto}.`
  if (t.retired) return 'This topic was retired by re-clustering: it takes no message any more.'
  return undefined
}

/**
 * The chatbot events that are topic commands (a re-analysis is not: it leaves topics as they are): the
 * analysis service gives each an analysis.topic-command-handled, and the gateway folds those it has not
 * handled yet.
 */
export const TOPIC_COMMAND_EVENT_TYPES = [
  'chatbot.topic-rename-requested',
  'chatbot.topic-hide-requested',
  'chatbot.topic-unhide-requested',
  'chatbot.topic-merge-requested',
  'chatbot.topic-creation-requested',
] as const

export type TopicCommandEventType = (typeof TOPIC_COMMAND_EVENT_TYPES)[number]

export function isTopicCommandEventType(type: string): type is TopicCommandEventType {
  return (TOPIC_COMMAND_EVENT_TYPES as readonly string[]).includes(type)
}

/**
 * A topic command committed on the chatbot's stream that the analysis service has not handled yet (no
 * analysis.topic-command-handled for it): a command on a topic, or a topic's creation.
 */
export type PendingTopicCommand =
  | { readonly kind: 'command'; readonly topicId: string; readonly command: TopicCommand }
  | { readonly kind: 'creation'; readonly topicId: string; readonly label: string }

/**
 * The topics as the pending commands will leave them: each decided in order on the topics the ones
 * before it left (decideTopicCommand, as the analysis service will decide it), a refused one skipped as
 * the analysis will skip it. A creation adds its topic, pinned, unless its id or label is taken (the
 * analysis refuses it then too). The gateway decides a new command on this, not on the read model alone,
 * so two commands in quick succession are not both decided on the same stale topics.
 */
export function foldPendingTopicCommands(
  topics: ReadonlyMap<string, TopicRow>,
  pending: readonly PendingTopicCommand[],
): ReadonlyMap<string, TopicRow> {
  let folded = topics
  for (const p of pending) {
    if (p.kind === 'creation') {
      if (folded.has(p.topicId) || topicWithLabel(folded, p.label)) continue
      const created: TopicRow = {
        id: p.topicId,
        label: tidyLabel(p.label),
        configured: false,
        mergedInto: null,
        retired: false,
        pinned: true,
        hidden: false,
      }
      folded = new Map([...folded, [p.topicId, created]])
      continue
    }
    const decision = decideTopicCommand(folded, p.topicId, p.command)
    if (decision.ok) folded = withTopicChanges(folded, decision.changes)
  }
  return folded
}

/**
 * The topics with a decision's changes made. A merged topic counts in its target from then on, and so do
 * the topics that counted in it (a chain of merges ends in one topic, as the read model keeps them).
 */
export function withTopicChanges(
  topics: ReadonlyMap<string, TopicRow>,
  changes: readonly TopicChange[],
): ReadonlyMap<string, TopicRow> {
  const next = new Map(topics)
  for (const change of changes) {
    const topic = next.get(change.id)
    if (!topic) continue
    next.set(change.id, {
      ...topic,
      ...(change.label !== undefined ? { label: change.label } : {}),
      ...(change.pinned !== undefined ? { pinned: change.pinned } : {}),
      ...(change.hidden !== undefined ? { hidden: change.hidden } : {}),
      ...(change.mergedInto !== undefined ? { mergedInto: change.mergedInto } : {}),
    })
    if (change.mergedInto !== undefined) {
      for (const t of next.values()) {
        if (t.mergedInto === change.id) next.set(t.id, { ...t, mergedInto: change.mergedInto })
      }
    }
  }
  return next
}

/** The command a chatbot.topic-*-requested event carries. */
export function topicCommandOf(
  event:
    | {
        readonly type: 'chatbot.topic-rename-requested'
        readonly payload: { topicId: string; label: string }
      }
    | { readonly type: 'chatbot.topic-hide-requested'; readonly payload: { topicId: string } }
    | { readonly type: 'chatbot.topic-unhide-requested'; readonly payload: { topicId: string } }
    | { readonly type: 'chatbot.topic-merge-requested'; readonly payload: { topicId: string; into: string } },
): { readonly topicId: string; readonly command: TopicCommand } {
  const { topicId } = event.payload
  switch (event.type) {
    case 'chatbot.topic-rename-requested':
      return { topicId, command: { type: 'rename', label: event.payload.label } }
    case 'chatbot.topic-hide-requested':
      return { topicId, command: { type: 'hide' } }
    case 'chatbot.topic-unhide-requested':
      return { topicId, command: { type: 'unhide' } }
    case 'chatbot.topic-merge-requested':
      return { topicId, command: { type: 'merge', into: event.payload.into } }
    default: {
      const unhandled: never = event
      throw new Error(`unhandled topic command ${JSON.stringify(unhandled)}`)
    }
  }
}

/** The pending command a topic command event is (topicCommandOf, or the topic a creation adds). */
export function pendingTopicCommandOf(
  event:
    | Parameters<typeof topicCommandOf>[0]
    | {
        readonly type: 'chatbot.topic-creation-requested'
        readonly payload: { topicId: string; label: string }
      },
): PendingTopicCommand {
  return event.type === 'chatbot.topic-creation-requested'
    ? { kind: 'creation', topicId: event.payload.topicId, label: event.payload.label }
    : { kind: 'command', ...topicCommandOf(event) }
}

/**
 * The chatbot.topic-*-requested event that asks for a command on `topic`, as the deciding side sees it
 * then: a rename records the label it has (previousLabel), which the command list shows after it is gone.
 */
export function topicCommandRequest(
  topic: Pick<TopicRow, 'id' | 'label'>,
  command: TopicCommand,
):
  | {
      readonly type: 'chatbot.topic-rename-requested'
      readonly payload: { topicId: string; label: string; previousLabel: string | null }
    }
  | { readonly type: 'chatbot.topic-hide-requested'; readonly payload: { topicId: string } }
  | { readonly type: 'chatbot.topic-unhide-requested'; readonly payload: { topicId: string } }
  | { readonly type: 'chatbot.topic-merge-requested'; readonly payload: { topicId: string; into: string } } {
  const topicId = topic.id
  switch (command.type) {
    case 'rename':
      return {
        type: 'chatbot.topic-rename-requested',
        payload: { topicId, label: tidyLabel(command.label), previousLabel: topic.label },
      }
    case 'hide':
      return { type: 'chatbot.topic-hide-requested', payload: { topicId } }
    case 'unhide':
      return { type: 'chatbot.topic-unhide-requested', payload: { topicId } }
    case 'merge':
      return { type: 'chatbot.topic-merge-requested', payload: { topicId, into: command.into } }
  }
}

/** A label as a command gives it: trimmed, inner runs of spaces made one. */
export function tidyLabel(label: string): string {
  return label.trim().replace(/\s+/g, ' ')
}
