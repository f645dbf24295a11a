import { describe, expect, it } from 'vitest'
import {
  decideTopicCommand,
  foldPendingTopicCommands,
  isTopicCommandEventType,
  pendingTopicCommandOf,
  TOPIC_COMMAND_EVENT_TYPES,
  type TopicRow,
} from './topic-commands.ts'

const id = (k: number) => `00000000-0000-4000-9000-${String(k).padStart(12, '0')}`
const row = (k: number, over: Partial<TopicRow> = {}): TopicRow => ({
  id: id(k),
  label: `topic ${k}`,
  configured: false,
  mergedInto: null,
  retired: false,
  pinned: false,
  hidden: false,
  ...over,
})
const topicsOf = (...rows: TopicRow[]) => new Map(rows.map((r) => [r.id, r]))

describe('commands on topics (issue 31, item 6)', () => {
  const topics = topicsOf(
    row(1),
    row(2, { label: 'Refunds' }),
    row(3, { configured: true, label: 'Billing' }),
    row(4, { mergedInto: id(1) }),
    row(5, { retired: true, label: 'Old' }),
    row(6, { hidden: true }),
  )

  it('renames and pins a topic, with its label tidied', () => {
    expect(decideTopicCommand(topics, id(1), { type: 'rename', label: '  Card   delivery ' })).toEqual({
      ok: true,
      events: [
        { type: 'analysis.topic-renamed-by-user', payload: { topicId: id(1), label: 'Card delivery' } },
      ],
      changes: [{ id: id(1), label: 'Card delivery', pinned: true }],
    })
  })

  it("refuses another topic's label (case aside), but not a retired or merged one's", () => {
    expect(decideTopicCommand(topics, id(1), { type: 'rename', label: 'REFUNDS' })).toEqual({
      ok: false,
      reason: 'label_taken',
      other: id(2),
    })
    expect(decideTopicCommand(topics, id(1), { type: 'rename', label: 'old' })).toMatchObject({ ok: true })
  })

  it('leaves configured topics to the settings: neither renamed nor merged away, but merged into', () => {
    expect(decideTopicCommand(topics, id(3), { type: 'rename', label: 'x' })).toEqual({
      ok: false,
      reason: 'configured',
    })
    expect(decideTopicCommand(topics, id(3), { type: 'merge', into: id(1) })).toEqual({
      ok: false,
      reason: 'configured',
    })
    expect(decideTopicCommand(topics, id(1), { type: 'merge', into: id(3) })).toMatchObject({ ok: true })
  })

  it('merges a topic into another, pinning the target', () => {
    expect(decideTopicCommand(topics, id(2), { type: 'merge', into: id(1) })).toEqual({
      ok: true,
      events: [{ type: 'analysis.topic-merged-by-user', payload: { topicId: id(2), into: id(1) } }],
      changes: [
        { id: id(2), mergedInto: id(1) },
        { id: id(1), pinned: true },
      ],
    })
  })

  it('refuses a merge into itself, an unknown, merged or retired topic', () => {
    for (const into of [id(2), id(99), id(4), id(5)]) {
      expect(decideTopicCommand(topics, id(2), { type: 'merge', into })).toMatchObject({
        ok: false,
        reason: 'bad_target',
      })
    }
  })

  it('refuses unknown, merged-away and retired topics', () => {
    expect(decideTopicCommand(topics, id(99), { type: 'hide' })).toEqual({ ok: false, reason: 'not_found' })
    expect(decideTopicCommand(topics, id(4), { type: 'hide' })).toMatchObject({ ok: false, reason: 'gone' })
    expect(decideTopicCommand(topics, id(5), { type: 'unhide' })).toMatchObject({ ok: false, reason: 'gone' })
  })

  it('hides and unhides; what changes nothing produces no event', () => {
    expect(decideTopicCommand(topics, id(1), { type: 'hide' })).toEqual({
      ok: true,
      events: [{ type: 'analysis.topic-hidden', payload: { topicId: id(1) } }],
      changes: [{ id: id(1), hidden: true }],
    })
    expect(decideTopicCommand(topics, id(6), { type: 'unhide' })).toMatchObject({
      events: [{ type: 'analysis.topic-unhidden', payload: { topicId: id(6) } }],
    })
    expect(decideTopicCommand(topics, id(6), { type: 'hide' })).toEqual({ ok: true, events: [], changes: [] })
    expect(decideTopicCommand(topics, id(1), { type: 'unhide' })).toEqual({
      ok: true,
      events: [],
      changes: [],
    })
    const pinned = topicsOf(row(1, { pinned: true, label: 'Mine' }))
    expect(decideTopicCommand(pinned, id(1), { type: 'rename', label: 'Mine' })).toEqual({
      ok: true,
      events: [],
      changes: [],
    })
  })
})

describe('the topics as the pending commands will leave them (the gateway decides on these)', () => {
  const topics = topicsOf(row(1), row(2), row(3, { mergedInto: id(2) }), row(4, { label: 'Refunds' }))

  it('decides the second of two opposite merges on what the first leaves: it is refused', () => {
    // Bug pinned: merges A->B and B->A sent at once were both decided on the read model and both answered 200.
    const folded = foldPendingTopicCommands(topics, [
      { kind: 'command', topicId: id(1), command: { type: 'merge', into: id(2) } },
    ])
    expect(folded.get(id(1))).toMatchObject({ mergedInto: id(2) })
    expect(folded.get(id(2))).toMatchObject({ pinned: true, mergedInto: null })
    expect(decideTopicCommand(folded, id(2), { type: 'merge', into: id(1) })).toMatchObject({
      ok: false,
      reason: 'bad_target',
    })
  })

  it('moves the topics counting in a merged one along with it (a chain of merges ends in one topic)', () => {
    const folded = foldPendingTopicCommands(topics, [
      { kind: 'command', topicId: id(2), command: { type: 'merge', into: id(1) } },
    ])
    expect(folded.get(id(3))).toMatchObject({ mergedInto: id(1) })
  })

  it("takes a pending rename's label: a creation with it is refused, a rename to the old one is not", () => {
    const folded = foldPendingTopicCommands(topics, [
      { kind: 'command', topicId: id(1), command: { type: 'rename', label: 'Billing' } },
    ])
    expect(folded.get(id(1))).toMatchObject({ label: 'Billing', pinned: true })
    expect(decideTopicCommand(folded, id(2), { type: 'rename', label: 'billing' })).toEqual({
      ok: false,
      reason: 'label_taken',
      other: id(1),
    })
    expect(decideTopicCommand(folded, id(2), { type: 'rename', label: 'topic 1' })).toMatchObject({
      ok: true,
    })
  })

  it('adds a created topic, pinned, unless its label or id is taken by then', () => {
    const folded = foldPendingTopicCommands(topics, [
      { kind: 'creation', topicId: id(9), label: ' Card  delivery ' },
      { kind: 'creation', topicId: id(10), label: 'card delivery' },
      { kind: 'creation', topicId: id(1), label: 'Something' },
    ])
    expect(folded.get(id(9))).toEqual(row(9, { label: 'Card delivery', pinned: true }))
    expect(folded.has(id(10))).toBe(false)
    expect(folded.get(id(1))).toEqual(row(1))
  })

  it('skips a command refused on the topics the ones before it left, as the analysis will', () => {
    const folded = foldPendingTopicCommands(topics, [
      { kind: 'command', topicId: id(1), command: { type: 'merge', into: id(2) } },
      { kind: 'command', topicId: id(1), command: { type: 'rename', label: 'Lost' } },
      { kind: 'command', topicId: id(2), command: { type: 'hide' } },
      { kind: 'command', topicId: id(2), command: { type: 'hide' } },
    ])
    expect(folded.get(id(1))).toEqual(row(1, { mergedInto: id(2) }))
    expect(folded.get(id(2))).toEqual(row(2, { pinned: true, hidden: true }))
  })

  it('leaves the topics as they are with nothing pending', () => {
    expect(foldPendingTopicCommands(topics, [])).toEqual(topics)
  })
})

describe('which chatbot events are topic commands, and the command each is', () => {
  it('names the four commands on a topic and a creation, not a re-analysis', () => {
    expect(TOPIC_COMMAND_EVENT_TYPES.every(isTopicCommandEventType)).toBe(true)
    expect(isTopicCommandEventType('chatbot.reanalysis-requested')).toBe(false)
    expect(isTopicCommandEventType('chatbot.settings-changed')).toBe(false)
  })

  it('reads each as the pending command the gateway folds', () => {
    const topicId = 't-1'
    expect(
      pendingTopicCommandOf({
        type: 'chatbot.topic-rename-requested',
        payload: { topicId, label: 'Refunds' },
      }),
    ).toEqual({ kind: 'command', topicId, command: { type: 'rename', label: 'Refunds' } })
    expect(pendingTopicCommandOf({ type: 'chatbot.topic-hide-requested', payload: { topicId } })).toEqual({
      kind: 'command',
      topicId,
      command: { type: 'hide' },
    })
    expect(pendingTopicCommandOf({ type: 'chatbot.topic-unhide-requested', payload: { topicId } })).toEqual({
      kind: 'command',
      topicId,
      command: { type: 'unhide' },
    })
    expect(
      pendingTopicCommandOf({ type: 'chatbot.topic-merge-requested', payload: { topicId, into: 't-2' } }),
    ).toEqual({ kind: 'command', topicId, command: { type: 'merge', into: 't-2' } })
    expect(
      pendingTopicCommandOf({
        type: 'chatbot.topic-creation-requested',
        payload: { topicId, label: 'Cards' },
      }),
    ).toEqual({ kind: 'creation', topicId, label: 'Cards' })
  })
})
