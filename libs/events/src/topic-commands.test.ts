import { describe, expect, it } from 'vitest'
import { decideTopicCommand, type TopicRow } from './topic-commands.ts'

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
