import { describe, expect, it } from 'vitest'
import type { TopicCommandEntry } from '../api/types.ts'
import { describeTopicCommand, topicCommandActor, topicCommandStatus } from './topic-commands.ts'

const command = (over: Partial<TopicCommandEntry>): TopicCommandEntry => ({
  id: 'c',
  type: 'hide',
  topicId: 't',
  topicLabel: 'Refunds',
  into: null,
  intoLabel: null,
  label: null,
  previousLabel: null,
  actor: { id: 'u', name: 'Ada', email: 'ada@example.com' },
  requestedAt: '2030-01-01T00:00:00Z',
  status: 'pending',
  reason: null,
  moved: null,
  handledAt: null,
  ...over,
})

describe('topic commands in words', () => {
  it.each([
    [command({ type: 'merge', into: 'b', intoLabel: 'Billing' }), "Merge of 'Refunds' into 'Billing'"],
    [
      command({ type: 'merge', into: 'b', intoLabel: null }),
      "Merge of 'Refunds' into 'a topic no longer listed'",
    ],
    [command({ type: 'rename', label: 'Money back' }), "Rename of 'Refunds' to 'Money back'"],
    [command({ type: 'rename', topicLabel: 'Money back', label: 'Money back' }), "Rename to 'Money back'"],
    // v2 renames name the label the topic had, also once the new one has replaced it, or another since.
    [
      command({ type: 'rename', topicLabel: 'Money back', label: 'Money back', previousLabel: 'Refunds' }),
      "Rename 'Refunds' to 'Money back'",
    ],
    [
      command({
        type: 'rename',
        topicLabel: 'refund, return',
        label: 'Money back',
        previousLabel: 'Refunds',
      }),
      "Rename 'Refunds' to 'Money back'",
    ],
    [
      command({ type: 'rename', topicLabel: 'Refunds', label: 'Refunds', previousLabel: 'Refunds' }),
      "Rename to 'Refunds'",
    ],
    [command({ type: 'hide' }), "Hiding 'Refunds'"],
    [command({ type: 'unhide', topicLabel: null }), "Showing 'a topic no longer listed' again"],
    [command({ type: 'create', topicLabel: null, label: 'Roadside' }), "Creation of 'Roadside'"],
  ])('%j', (c, words) => {
    expect(describeTopicCommand(c)).toBe(words)
  })

  it('says what became of each, a refusal with its reason in words, marked', () => {
    expect(topicCommandStatus(command({}))).toEqual({
      text: 'Pending: the analysis has not applied it yet',
      tone: 'pending',
    })
    expect(topicCommandStatus(command({ status: 'applied' }))).toEqual({ text: 'Done', tone: 'done' })
    expect(topicCommandStatus(command({ status: 'unchanged' })).tone).toBe('done')
    // A creation says how many requests it moved, none included (trial2: "Done" alone for none).
    const created = (moved: number | null) =>
      topicCommandStatus(command({ type: 'create', label: 'Card declined', status: 'applied', moved })).text
    expect(created(null)).toBe('Done')
    expect(created(1)).toBe('Done: 1 request moved into it')
    expect(created(12)).toBe('Done: 12 requests moved into it')
    expect(created(0)).toMatch(
      /^Done, but no request moved into it: .*chatbot's own topics \(set in its settings\), which keep theirs/,
    )
    expect(topicCommandStatus(command({ status: 'refused', reason: 'gone' }))).toEqual({
      text: 'Refused: by then the topic had been merged into another or retired by re-clustering',
      tone: 'refused',
    })
    expect(topicCommandStatus(command({ status: 'refused', reason: 'something new' })).text).toBe(
      'Refused: something new',
    )
    expect(topicCommandStatus(command({ status: 'failed', reason: 'x' })).tone).toBe('refused')
  })

  it('names who sent it: name, else email, else nobody', () => {
    expect(topicCommandActor(command({}))).toBe('Ada')
    expect(topicCommandActor(command({ actor: { id: 'u', name: null, email: 'a@x.io' } }))).toBe('a@x.io')
    expect(topicCommandActor(command({ actor: null }))).toBeUndefined()
  })
})
