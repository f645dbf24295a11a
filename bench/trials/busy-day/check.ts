/** busy-day.ts check: the counts the API gives beside the ledger and the read models (read-only). */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { api, readState } from './state.ts'

export interface CheckOptions {
  readonly state: string
  readonly days: string
  readonly 'data-dir': string
}

async function readModels(dataDir: string): Promise<pg.Client> {
  const port = Number(readFileSync(path.join(dataDir, 'postgres/postmaster.pid'), 'utf8').split('\n')[3])
  const password = readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim()
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' })
  await client.connect()
  await client.query('SET default_transaction_read_only = on')
  return client
}

export async function check(opts: CheckOptions): Promise<void> {
  const state = await readState(opts.state)
  const ledger = state.ledger!
  const q = `chatbotId=${state.chatbotId}&days=${opts.days}`
  const overview = await api<Record<string, unknown>>(state, `/api/v1/analytics/overview?${q}`)
  const signals = await api<{
    conversations: number
    signals: { name: string; conversations: number; conversationsChecked: number }[]
  }>(state, `/api/v1/analytics/signals?${q}`)
  const topics = await api<Record<string, unknown>>(state, `/api/v1/analytics/topics?${q}`)
  let listed = 0
  let listedMessages = 0
  let cursor: string | null = null
  do {
    const page: { conversations: { messageCount: number }[]; nextCursor: string | null } = await api(
      state,
      `/api/v1/conversations?chatbotId=${state.chatbotId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
    )
    listed += page.conversations.length
    listedMessages += page.conversations.reduce((sum, c) => sum + c.messageCount, 0)
    cursor = page.nextCursor
  } while (cursor)
  const acceptedMessages = Object.values(ledger.accepted).reduce((sum, ids) => sum + ids.length, 0)
  const db = await readModels(opts['data-dir'])
  const one = async (sql: string, params: unknown[] = [state.chatbotId]) =>
    (await db.query(sql, params)).rows[0] as Record<string, unknown>
  const rows = {
    conversations: await one('SELECT count(*)::int AS n FROM rm_conversations WHERE chatbot_id = $1'),
    conversationMessageCounts: await one(
      'SELECT sum(message_count)::int AS n FROM rm_conversations WHERE chatbot_id = $1',
    ),
    messages: await one(
      "SELECT count(*)::int AS n, count(*) FILTER (WHERE role = 'user')::int AS user, count(sentiment_score)::int AS scored FROM rm_messages WHERE chatbot_id = $1",
    ),
    captureIds: await one(
      'SELECT count(*)::int AS n FROM capture_message_ids i JOIN rm_conversations c ON c.id = i.conversation_id WHERE c.chatbot_id = $1',
    ),
    hourlyStats: await one(
      'SELECT sum(messages)::int AS messages, sum(user_messages)::int AS user, sum(sentiment_count)::int AS scored FROM rm_hourly_stats WHERE chatbot_id = $1',
    ),
    analysisResults: await one('SELECT count(*)::int AS n FROM analysis_results WHERE chatbot_id = $1'),
    hourlyTopics: await one('SELECT sum(messages)::int AS n FROM rm_hourly_topics WHERE chatbot_id = $1'),
    messageTopics: await one(
      "SELECT count(*)::int AS n FROM rm_messages m, unnest(coalesce(m.topics, '{}')) t WHERE m.chatbot_id = $1",
    ),
    signalRows: await one('SELECT count(*)::int AS n FROM rm_conversation_signals WHERE chatbot_id = $1'),
    signalsDecided: await one('SELECT count(*)::int AS n FROM rm_signals_decided WHERE chatbot_id = $1'),
    jobs: await one(
      "SELECT count(*)::int AS n, count(*) FILTER (WHERE status <> 'done')::int AS not_done, string_agg(DISTINCT status, ',') AS statuses FROM analysis_jobs WHERE chatbot_id = $1",
    ),
    analysedEvents: await one(
      "SELECT type, count(*)::int AS n FROM event_journal WHERE chatbot_id = $1 AND type = 'analysis.messages-analyzed' GROUP BY type",
    ),
    deadLetters: await one(
      'SELECT (SELECT count(*) FROM dead_letters)::int AS consumer, (SELECT count(*) FROM analysis_dead_letters)::int AS analysis',
      [],
    ),
  }
  const badStored = (
    await db.query('SELECT count(*)::int AS n FROM rm_conversations WHERE external_id = ANY($1)', [
      ledger.badConversationIds,
    ])
  ).rows[0]
  const reversedOutOfOrder = (
    await db.query(
      `SELECT count(*)::int AS n FROM rm_conversations c WHERE c.chatbot_id = $1 AND c.external_id = ANY($2) AND EXISTS (
         SELECT 1 FROM rm_messages m WHERE m.conversation_id = c.id AND m.message_id = 'm0'
           AND m.sent_at <> c.first_message_at)`,
      [state.chatbotId, ledger.reversed],
    )
  ).rows[0]
  const editedStored = (
    await db.query(
      "SELECT count(*)::int AS n FROM rm_messages WHERE chatbot_id = $1 AND content LIKE '% (edited)'",
      [state.chatbotId],
    )
  ).rows[0]
  await db.end()
  console.log(
    JSON.stringify(
      {
        ledger: {
          conversationsAccepted: Object.keys(ledger.accepted).length,
          messagesAccepted: acceptedMessages,
          badRequests: ledger.badConversationIds.length,
        },
        api: {
          overview,
          signals: {
            conversations: signals.conversations,
            byName: signals.signals.map((s) => [s.name, s.conversations, s.conversationsChecked]),
          },
          topics: Object.fromEntries(
            Object.entries(topics).filter(([k]) => !['topics', 'themes', 'hiddenTopics'].includes(k)),
          ),
          topicCount: (topics.topics as unknown[] | undefined)?.length,
          list: { conversations: listed, messages: listedMessages },
        },
        rows,
        badConversationsStored: badStored,
        reversedWithWrongFirstMessage: reversedOutOfOrder,
        duplicateIdSecondContentStored: editedStored,
      },
      null,
      2,
    ),
  )
}
