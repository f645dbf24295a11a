/**
 * The projection's rules, one test each: given events, projected by the live projector's steps, then
 * the read models' rows (given.ts). Last, the rule that the set-based apply gives, row for row, what
 * applying the same events one at a time gives, however they are cut into batches, over a journal that
 * interleaves every rule.
 */
import { randomUUID } from 'node:crypto'
import { UNDETERMINED_LANGUAGE } from '@cas/events'
import { describe, expect, it } from 'vitest'
import { journal, projectionTests, type Row } from '../../test/given.ts'
import { CHATBOT_TABLES, READ_MODEL_TABLES } from './registry.ts'

const { given, allRows } = projectionTests()
const orgId = randomUUID()
const kept = randomUUID()
const doomed = randomUUID()

const metadata = (user: Record<string, string>, session: Record<string, string> = {}) => ({
  user,
  organization: {},
  session,
  custom: { tier: 'gold' },
})
const message = (id: string, role: 'user' | 'assistant', sentAt: string, content = `text of ${id}`) => ({
  id,
  role,
  content,
  sentAt,
})
/** Results `[message, score, label, topics, language?]` (without a language, the result says none). */
const results = (...r: [string, number, 'positive' | 'neutral' | 'negative', string[], string?][]) => ({
  analyzer: { name: 'test', version: String(r.length) },
  results: r.map(([messageId, score, label, topics, language]) => ({
    messageId,
    sentiment: { score, label },
    topics: topics.map((t) => ({ id: t, label: t })),
    ...(language === undefined ? {} : { language }),
  })),
  signalsDecided: true,
})

/**
 * An interleaved journal touching every rule of the projection at once, for the rule that the batches'
 * cut does not matter.
 */
function workload() {
  const j = journal(orgId)
  const append = j.append
  const [c1, c2, c3, c4, c5, c6] = Array.from({ length: 6 }, () => randomUUID()) as [
    string,
    string,
    string,
    string,
    string,
    string,
  ]
  const captured = (messages: ReturnType<typeof message>[]) => ({
    messages,
    receivedAt: '2026-11-20T12:00:00.000Z',
    analysisRequested: true,
  })
  append(kept, 'chatbot', kept, 'chatbot.created', {
    name: 'kept',
    settings: {},
    apiKeyPrefix: 'svc_live_abcd…',
  })
  // Analysis runs ahead of the conversation (another topic): results before the messages exist.
  append(
    kept,
    'analysis',
    c1,
    'analysis.messages-analyzed',
    results(['m1', 0.5, 'positive', ['refunds'], 'es']),
  )
  append(kept, 'analysis', c1, 'analysis.conversation-analyzed', {
    analyzer: { name: 'test', version: '1' },
    sentiment: { score: 0.5, label: 'positive' },
    assistantSentiment: null,
    topics: [{ id: 'refunds', label: 'refunds' }],
  })
  // A metadata change of a conversation with no row yet changes nothing.
  append(kept, 'conversation', c4, 'conversation.metadata-updated', metadata({ id: 'ghost' }))
  append(kept, 'conversation', c1, 'conversation.started', {
    conversationId: 'c-1',
    ...metadata({ id: 'u1' }),
  })
  append(
    kept,
    'conversation',
    c1,
    'conversation.messages-captured',
    captured([
      message('m1', 'user', '2026-11-20T10:05:00.000Z'),
      message('m2', 'assistant', '2026-11-20T10:06:00.000Z'),
    ]),
    '2026-11-20T10:06:01.000Z',
  )
  append(kept, 'conversation', c2, 'conversation.started', { conversationId: 'c-2', ...metadata({}) })
  append(
    kept,
    'conversation',
    c2,
    'conversation.messages-captured',
    captured([message('a', 'user', '2026-11-20T10:30:00.000Z')]),
  )
  append(
    kept,
    'analysis',
    c1,
    'analysis.messages-analyzed',
    results(['m2', -0.25, 'negative', ['billing', 'refunds']]),
  )
  append(
    kept,
    'conversation',
    c4,
    'conversation.messages-captured',
    captured([message('x', 'user', '2026-11-20T09:00:00.000Z')]),
  )
  // The end user changes: activity rows keep the one a capture had, and a later capture without one keeps it.
  append(
    kept,
    'conversation',
    c1,
    'conversation.metadata-updated',
    metadata({ id: 'u2' }, { device: 'ios' }),
    '2026-11-20T11:00:00.000Z',
  )
  append(kept, 'conversation', c2, 'conversation.metadata-updated', metadata({ id: 'u3' }))
  append(
    kept,
    'conversation',
    c2,
    'conversation.messages-captured',
    captured([message('b', 'assistant', '2026-11-20T10:31:00.000Z')]),
  )
  append(
    kept,
    'conversation',
    c1,
    'conversation.messages-captured',
    captured([
      message('m3', 'user', '2026-11-20T11:01:00.000Z'),
      message('m4', 'user', '2026-11-20T09:59:00.000Z'),
    ]),
    '2026-11-20T11:01:02.000Z',
  )
  append(kept, 'conversation', c2, 'conversation.metadata-updated', metadata({ plan: 'pro' }))
  append(
    kept,
    'conversation',
    c2,
    'conversation.messages-captured',
    captured([message('c', 'user', '2026-11-20T10:45:00.000Z')]),
  )
  // Re-analysis, twice in a row, and an analysis after capture.
  append(
    kept,
    'analysis',
    c1,
    'analysis.messages-analyzed',
    results(['m1', 0, 'neutral', ['shipping'], 'en'], ['m3', 0.75, 'positive', [], 'fr']),
  )
  append(
    kept,
    'analysis',
    c1,
    'analysis.messages-analyzed',
    results(['m1', -1, 'negative', ['shipping', 'refunds']]),
  )
  append(
    kept,
    'analysis',
    c2,
    'analysis.messages-analyzed',
    results(['a', 0.5, 'positive', ['refunds'], 'de'], ['b', 0.5, 'positive', ['refunds']]),
  )
  append(kept, 'analysis', c2, 'analysis.conversation-analyzed', {
    analyzer: { name: 'test', version: '1' },
    sentiment: { score: 0.5, label: 'positive' },
    assistantSentiment: null,
    topics: [
      { id: 'refunds', label: 'refunds' },
      { id: 'billing', label: 'billing' },
    ],
  })
  // A message captured again (content replaced, counted again with its result).
  append(
    kept,
    'conversation',
    c2,
    'conversation.messages-captured',
    captured([message('a', 'user', '2026-11-20T13:30:00.000Z', 'edited')]),
  )
  // An erased conversation: its rows go, the rollups take it back, later events are dropped.
  append(kept, 'conversation', c3, 'conversation.started', {
    conversationId: 'c-3',
    ...metadata({ id: 'u1' }),
  })
  append(
    kept,
    'conversation',
    c3,
    'conversation.messages-captured',
    captured([
      message('q', 'user', '2026-11-20T10:10:00.000Z'),
      message('r', 'assistant', '2026-11-20T10:11:00.000Z'),
    ]),
  )
  append(
    kept,
    'analysis',
    c3,
    'analysis.messages-analyzed',
    results(['q', 0.25, 'positive', ['refunds'], 'it']),
  )
  append(kept, 'conversation', c3, 'conversation.erased', { reason: 'end-user-erasure' })
  append(kept, 'analysis', c3, 'analysis.messages-analyzed', results(['r', -0.5, 'negative', ['refunds']]))
  append(kept, 'analysis', c3, 'analysis.conversation-analyzed', {
    analyzer: { name: 'test', version: '1' },
    sentiment: { score: 0.5, label: 'positive' },
    assistantSentiment: null,
    topics: [],
  })
  // The same hour gets messages again after the erasure.
  append(
    kept,
    'conversation',
    c4,
    'conversation.messages-captured',
    captured([message('y', 'assistant', '2026-11-20T10:12:00.000Z')]),
  )
  // A deleted chatbot: everything of it goes, and what comes after is dropped.
  append(doomed, 'conversation', c5, 'conversation.started', {
    conversationId: 'c-5',
    ...metadata({ id: 'u9' }),
  })
  append(
    doomed,
    'conversation',
    c5,
    'conversation.messages-captured',
    captured([message('d', 'user', '2026-11-20T10:20:00.000Z')]),
  )
  append(
    doomed,
    'analysis',
    c5,
    'analysis.messages-analyzed',
    results(['d', 0.5, 'positive', ['refunds'], 'pt']),
  )
  append(doomed, 'chatbot', doomed, 'chatbot.deleted', {})
  append(doomed, 'analysis', c6, 'analysis.messages-analyzed', results(['e', 0.5, 'positive', ['refunds']]))
  append(
    doomed,
    'conversation',
    c5,
    'conversation.messages-captured',
    captured([message('f', 'user', '2026-11-20T10:20:00.000Z')]),
  )
  append(
    kept,
    'conversation',
    c1,
    'conversation.messages-captured',
    captured([message('m5', 'assistant', '2026-11-20T11:02:00.000Z')]),
    '2026-11-20T11:02:01.000Z',
  )
  append(
    kept,
    'analysis',
    c1,
    'analysis.messages-analyzed',
    results(['m5', 0.25, 'positive', ['billing']], ['m4', 0, 'neutral', [], UNDETERMINED_LANGUAGE]),
  )
  return j
}

const captured = (messages: ReturnType<typeof message>[]) => ({
  messages,
  receivedAt: '2026-11-20T12:00:00.000Z',
  analysisRequested: true,
})
const hourOf = (row: Row) => String(row.hour).slice(11, 13)

/** A chatbot of its own, created, and a conversation of it started (by `conversationId`). */
function chatbotWithConversation() {
  const j = journal(orgId)
  const bot = randomUUID()
  const conversation = randomUUID()
  j.append(bot, 'chatbot', bot, 'chatbot.created', {
    name: 'bot',
    settings: {},
    apiKeyPrefix: 'svc_live_abcd…',
  })
  j.append(bot, 'conversation', conversation, 'conversation.started', {
    conversationId: 'c-1',
    ...metadata({ id: 'u1' }),
  })
  return { j, bot, conversation }
}

describe('the projection', () => {
  it('counts an analysis result that arrives before its message once the message arrives', async () => {
    const j = journal(orgId)
    const bot = randomUUID()
    const c = randomUUID()
    j.append(bot, 'analysis', c, 'analysis.messages-analyzed', results(['m1', 0.5, 'positive', ['refunds']]))
    j.append(bot, 'conversation', c, 'conversation.started', {
      conversationId: 'c-1',
      ...metadata({ id: 'u1' }),
    })
    j.append(
      bot,
      'conversation',
      c,
      'conversation.messages-captured',
      captured([message('m1', 'user', '2026-11-20T10:05:00.000Z')]),
    )
    const projected = given(j).projected()
    await projected.thenRows('rm_messages', (m) => [m.message_id, m.role, m.sentiment_label, m.topics], [
      ['m1', 'user', 'positive', ['refunds']],
    ])
    await projected.thenRows(
      'rm_hourly_stats',
      (h) => [hourOf(h), h.messages, h.sentiment_count, h.positive],
      [['10', 1, 1, 1]],
    )
    await projected.thenRows('rm_hourly_topics', (t) => [hourOf(t), t.topic, t.messages], [
      ['10', 'refunds', 1],
    ])
  })

  it('changes nothing on a metadata change of a conversation it holds no row of yet', async () => {
    const j = journal(orgId)
    const bot = randomUUID()
    const c = randomUUID()
    j.append(bot, 'conversation', c, 'conversation.metadata-updated', metadata({ id: 'ghost' }))
    await given(j)
      .projected()
      .thenRows('rm_conversations', (r) => r.id, [])
    // Its capture then makes a row without that end user, and without an id of the chatbot's.
    j.append(
      bot,
      'conversation',
      c,
      'conversation.messages-captured',
      captured([message('x', 'user', '2026-11-20T09:00:00.000Z')]),
    )
    await given(j)
      .projected()
      .thenRows(
        'rm_conversations',
        (r) => [r.external_id, r.message_count, r.stream_version, r.end_user_id],
        [[null, 1, 2, null]],
      )
  })

  it('replaces a message’s result on re-analysis, twice in one batch, in the rollups too', async () => {
    const { j, bot, conversation } = chatbotWithConversation()
    j.append(
      bot,
      'conversation',
      conversation,
      'conversation.messages-captured',
      captured([message('m1', 'user', '2026-11-20T10:05:00.000Z')]),
    )
    j.append(
      bot,
      'analysis',
      conversation,
      'analysis.messages-analyzed',
      results(['m1', 0, 'neutral', ['shipping']]),
    )
    j.append(
      bot,
      'analysis',
      conversation,
      'analysis.messages-analyzed',
      results(['m1', -1, 'negative', ['shipping', 'refunds']]),
    )
    const projected = given(j).projected()
    await projected.thenRows(
      'rm_messages',
      (m) => [m.message_id, m.sentiment_score, m.sentiment_label, m.topics],
      [['m1', -1, 'negative', ['shipping', 'refunds']]],
    )
    await projected.thenRows(
      'rm_hourly_stats',
      (h) => [
        hourOf(h),
        h.messages,
        Number(h.sentiment_sum),
        h.sentiment_count,
        h.positive,
        h.neutral,
        h.negative,
      ],
      [['10', 1, -1, 1, 0, 0, 1]],
    )
    await projected.thenRows(
      'rm_hourly_topics',
      (t) => [hourOf(t), t.topic, t.messages, Number(t.sentiment_sum)],
      [
        ['10', 'refunds', 1, -1],
        ['10', 'shipping', 1, -1],
      ],
    )
  })

  it('replaces the content of a message captured again, and counts it again in its new hour', async () => {
    const { j, bot, conversation } = chatbotWithConversation()
    j.append(
      bot,
      'conversation',
      conversation,
      'conversation.messages-captured',
      captured([message('a', 'user', '2026-11-20T10:30:00.000Z')]),
    )
    j.append(
      bot,
      'analysis',
      conversation,
      'analysis.messages-analyzed',
      results(['a', 0.5, 'positive', ['refunds']]),
    )
    j.append(
      bot,
      'conversation',
      conversation,
      'conversation.messages-captured',
      captured([message('a', 'user', '2026-11-20T13:30:00.000Z', 'edited')]),
    )
    const projected = given(j).projected()
    await projected.thenRows('rm_messages', (m) => [m.message_id, m.content], [['a', 'edited']])
    await projected.thenRows('rm_hourly_stats', (h) => [hourOf(h), h.messages, h.sentiment_count], [
      ['10', 1, 1],
      ['13', 1, 1],
    ])
  })

  it('keeps the end user a conversation had when each message was captured', async () => {
    const { j, bot, conversation } = chatbotWithConversation()
    j.append(
      bot,
      'conversation',
      conversation,
      'conversation.messages-captured',
      captured([message('m1', 'user', '2026-11-20T10:05:00.000Z')]),
    )
    j.append(bot, 'conversation', conversation, 'conversation.metadata-updated', metadata({ id: 'u2' }))
    j.append(
      bot,
      'conversation',
      conversation,
      'conversation.messages-captured',
      captured([
        message('m3', 'user', '2026-11-20T11:01:00.000Z'),
        message('m4', 'user', '2026-11-20T09:59:00.000Z'),
      ]),
    )
    // A later capture in an hour, with no end user since, keeps the one the hour has.
    j.append(bot, 'conversation', conversation, 'conversation.metadata-updated', metadata({ plan: 'pro' }))
    j.append(
      bot,
      'conversation',
      conversation,
      'conversation.messages-captured',
      captured([message('m5', 'user', '2026-11-20T11:30:00.000Z')]),
    )
    await given(j)
      .projected()
      .thenRows('rm_hourly_activity', (a) => [hourOf(a), a.end_user_id], [
        ['09', 'u2'],
        ['10', 'u1'],
        ['11', 'u2'],
      ])
  })

  it('leaves nothing of an erased conversation, takes it back out of the rollups, and drops its late events', async () => {
    const { j, bot, conversation } = chatbotWithConversation()
    j.append(
      bot,
      'conversation',
      conversation,
      'conversation.messages-captured',
      captured([
        message('q', 'user', '2026-11-20T10:10:00.000Z'),
        message('r', 'assistant', '2026-11-20T10:11:00.000Z'),
      ]),
    )
    j.append(
      bot,
      'analysis',
      conversation,
      'analysis.messages-analyzed',
      results(['q', 0.25, 'positive', ['refunds'], 'es']),
    )
    j.append(bot, 'conversation', conversation, 'conversation.erased', { reason: 'end-user-erasure' })
    j.append(
      bot,
      'analysis',
      conversation,
      'analysis.messages-analyzed',
      results(['r', -0.5, 'negative', ['refunds']]),
    )
    j.append(bot, 'analysis', conversation, 'analysis.conversation-analyzed', {
      analyzer: { name: 'test', version: '1' },
      sentiment: { score: 0.5, label: 'positive' },
      assistantSentiment: null,
      topics: [],
    })
    const projected = given(j).projected()
    await projected.thenDropped({ conversation_erased: 2 })
    for (const table of [
      'rm_conversations',
      'rm_messages',
      'rm_hourly_stats',
      'rm_hourly_topics',
      'rm_hourly_languages',
      'rm_hourly_activity',
    ])
      await projected.thenRows(table, (r) => r, [])
    await projected.thenRows('rm_erased_conversations', (r) => r.conversation_id, [conversation])
  })

  it('removes every row of a deleted chatbot, and drops its late events', async () => {
    const { j, bot, conversation } = chatbotWithConversation()
    j.append(
      bot,
      'conversation',
      conversation,
      'conversation.messages-captured',
      captured([message('d', 'user', '2026-11-20T10:20:00.000Z')]),
    )
    j.append(
      bot,
      'analysis',
      conversation,
      'analysis.messages-analyzed',
      results(['d', 0.5, 'positive', ['refunds'], 'es']),
    )
    j.append(bot, 'chatbot', bot, 'chatbot.deleted', {})
    j.append(
      bot,
      'analysis',
      randomUUID(),
      'analysis.messages-analyzed',
      results(['e', 0.5, 'positive', ['refunds']]),
    )
    j.append(
      bot,
      'conversation',
      conversation,
      'conversation.messages-captured',
      captured([message('f', 'user', '2026-11-20T10:20:00.000Z')]),
    )
    const projected = given(j).projected()
    await projected.thenDropped({ chatbot_deleted: 2 })
    // Every table the registry says a deletion clears, and the chatbot's own row.
    for (const table of [...CHATBOT_TABLES, 'rm_chatbots']) await projected.thenRows(table, (r) => r, [])
    await projected.thenRows('rm_deleted_chatbots', (r) => r.chatbot_id, [bot])
  })
})

describe('the set-based apply', () => {
  it('gives the read models of applying one event at a time, however the batches are cut', async () => {
    const events = workload()
    const oneByOne = given(events).projected({ batches: [1] })
    await oneByOne.thenDropped({ conversation_erased: 2, chatbot_deleted: 2 })
    const tables = await allRows(oneByOne)
    expect(tables.rm_conversations).toHaveLength(3)
    expect(tables.rm_messages!.length).toBeGreaterThan(5)
    expect(tables.rm_erased_conversations).toHaveLength(1)
    expect(tables.rm_deleted_chatbots).toHaveLength(1)
    // Worked out by hand from the workload: the erased conversation and the deleted chatbot leave
    // nothing; m1's results are replaced twice; 'a', captured again at 13h, is counted there too.
    // Sentiment: the end users' messages, then the assistant's (m2 -0.25 and b 0.5 at 10h, m5 0.25 at 11h).
    await oneByOne.thenRows(
      'rm_hourly_stats',
      (h) => [
        hourOf(h),
        h.messages,
        h.user_messages,
        h.assistant_messages,
        Number(h.sentiment_sum),
        h.sentiment_count,
        h.positive,
        h.neutral,
        h.negative,
        Number(h.assistant_sentiment_sum),
        h.assistant_sentiment_count,
        h.assistant_positive,
        h.assistant_neutral,
        h.assistant_negative,
      ],
      [
        ['09', 2, 2, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0],
        ['10', 6, 3, 3, -0.5, 2, 1, 0, 1, 0.25, 2, 1, 0, 1],
        ['11', 2, 1, 1, 0.75, 1, 1, 0, 0, 0.25, 1, 1, 0, 0],
        ['13', 1, 1, 0, 0.5, 1, 1, 0, 0, 0, 0, 0, 0, 0],
      ],
    )
    // Topics of the end users' messages only (m2, b and m5 are the assistant's), with their sentiment.
    await oneByOne.thenRows(
      'rm_hourly_topics',
      (t) => `${hourOf(t)} ${t.topic} ${t.messages} ${Number(t.sentiment_sum)}`,
      ['10 refunds 2 -0.5', '10 shipping 1 -1', '13 refunds 1 0.5'],
    )
    // Languages of the end users' messages: m1's last result that said one (en, after es), m3 fr, 'a' de
    // in its new hour; m4 'und', the erased q and the deleted chatbot's d count nowhere.
    await oneByOne.thenRows('rm_hourly_languages', (l) => `${hourOf(l)} ${l.language} ${l.messages}`, [
      '10 en 1',
      '11 fr 1',
      '13 de 1',
    ])
    await oneByOne.thenRows(
      'rm_conversations',
      (c) => [c.external_id, c.message_count, c.stream_version, c.end_user_id, c.sentiment_label],
      [
        // Started by no event of its own (a metadata change before any row changed nothing).
        [null, 2, 3, null, null],
        ['c-1', 5, 5, 'u2', 'positive'],
        ['c-2', 4, 7, null, 'positive'],
      ],
    )
    // c1: u1 at 10h, then u2 (9h and 11h); c2: u3 at 10h (kept by a later capture without one), none at
    // 13h; c4 never had one.
    await oneByOne.thenRows('rm_hourly_activity', (a) => a.end_user_id ?? '-', [
      '-',
      '-',
      '-',
      'u1',
      'u2',
      'u2',
      'u3',
    ])
    for (const sizes of [[events.events.length], [2], [3, 7], [5, 1, 11], [13]]) {
      const batched = given(events).projected({ batches: sizes })
      expect(await batched.stats(), `batches of ${sizes.join(', ')}`).toEqual(await oneByOne.stats())
      const batchedTables = await allRows(batched)
      for (const table of READ_MODEL_TABLES)
        expect(batchedTables[table], `${table}, batches of ${sizes.join(', ')}`).toEqual(tables[table])
    }
  })
})
