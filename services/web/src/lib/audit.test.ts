import { describe, expect, it } from 'vitest'
import type { AuditEntry } from '../api/types.ts'
import { auditActor, describeAuditEntry } from './audit.ts'

const entry = (
  action: string,
  target: AuditEntry['target'],
  details: Record<string, unknown> = {},
): AuditEntry => ({
  id: 'e',
  occurredAt: '2030-01-01T00:00:00Z',
  action,
  actor: { id: 'u', email: 'ann@example.com', name: 'Ann' },
  target,
  details,
})
const member = { type: 'member' as const, id: 'u2', name: 'bob@example.com' }
const bot = { type: 'chatbot' as const, id: 'c', name: 'Sales bot' }

describe('audit entries in words', () => {
  it.each([
    [
      entry('organization.member-invited', { ...member, type: 'invitation' }, { role: 'viewer' }),
      'invited bob@example.com as viewer',
    ],
    [
      entry('organization.member-joined', member, { role: 'owner', invitationId: null }),
      'joined as owner, founding it',
    ],
    [
      entry('organization.member-role-changed', member, { role: 'admin', previousRole: 'member' }),
      'changed the role of bob@example.com from member to admin',
    ],
    [
      entry('organization.member-removed', member, { role: 'viewer', reason: 'removed' }),
      'removed bob@example.com (viewer)',
    ],
    [entry('organization.member-removed', member, { role: 'viewer', reason: 'left' }), 'left (was viewer)'],
    [
      entry('chatbot.renamed', bot, { previousName: 'Support bot' }),
      'renamed the chatbot Support bot to Sales bot',
    ],
    [
      entry('chatbot.topic-rename-requested', bot, { label: 'Refunds', previousLabel: 'refund, money back' }),
      "renamed the topic 'refund, money back' of Sales bot to 'Refunds'",
    ],
    [
      entry('chatbot.topic-rename-requested', bot, { label: 'Refunds' }),
      'renamed a topic of Sales bot to Refunds',
    ],
    // A deleted chatbot's topic commands keep their topic ids only: the labels went with its data.
    [entry('chatbot.topic-rename-requested', bot, { topicId: 't' }), 'renamed a topic of Sales bot'],
    [
      entry('chatbot.topic-creation-requested', bot, {
        topicId: 't',
        label: 'Refunds',
        examples: ['a', 'b'],
      }),
      'created the topic Refunds of Sales bot from examples',
    ],
    [
      entry('chatbot.topic-creation-requested', bot, { topicId: 't' }),
      'created a topic of Sales bot from examples',
    ],
    [
      entry('chatbot.settings-changed', bot, { patch: { retentionDays: 30, topics: null } }),
      'changed the settings of Sales bot (retentionDays, topics)',
    ],
    [
      entry('chatbot.key-rotated', bot, { apiKeyPrefix: 'svc_live_0b7c…' }),
      'rotated the API key of Sales bot (now svc_live_0b7c…)',
    ],
    [
      entry('conversation.erased', bot, { conversationsErased: 1 }),
      "erased an end user's data from Sales bot (1 conversation)",
    ],
    [entry('something.new', bot), 'something.new'],
  ])('%#: %s', (e, words) => {
    expect(describeAuditEntry(e)).toBe(words)
  })

  it('names the actor by name, else email', () => {
    const e = entry('chatbot.deleted', bot)
    expect(auditActor(e)).toBe('Ann')
    expect(auditActor({ ...e, actor: { id: 'u', email: 'ann@example.com', name: '' } })).toBe(
      'ann@example.com',
    )
    expect(auditActor({ ...e, actor: null })).toBe('The service')
  })
})
