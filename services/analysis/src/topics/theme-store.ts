import type pg from 'pg'
import { currentTopic } from './recluster.ts'
import { SimilarityMemo } from './similarity-memo.ts'
import { GROUPING_VERSION, groupThemes, type Theme } from './themes.ts'
import { pointKey, type TopicState } from './topic-model.ts'

export interface ThemesAssigned {
  readonly type: 'analysis.themes-assigned'
  readonly payload: { themes: { themeId: string; label: string; topicIds: string[] }[] }
}

/**
 * The hook that keeps a chatbot's themes (themes.ts) in step with its topics: call it after the chatbot's
 * topic state was saved, in the same transaction and under the same lock (TopicStore.lock), whenever
 * topics may have been found, relabeled, merged or moved (topic placement, re-clustering). It groups
 * anew only when the chatbot's topics (their ids and labels) or the grouping's rule (GROUPING_VERSION)
 * differ from those of the last grouping, and
 * returns the event to append on the chatbot's topic stream when the themes changed, else undefined.
 * `pending`: the topic of each window request (by topic-model.ts pointKey) that the caller's decision placed or
 * moved and analysis_results does not hold yet (topic placement writes the job's results and moves after this).
 */
export async function assignThemes(
  client: pg.ClientBase,
  state: TopicState,
  pending: ReadonlyMap<string, string> = new Map(),
): Promise<ThemesAssigned | undefined> {
  const topics = [...state.topics.values()].filter((t) => t.mergedInto === null && !t.retired && t.size > 0)
  // JSON: a text column takes no NUL characters as separators. The grouping's version first: a changed
  // rule groups anew.
  const signature = JSON.stringify([
    GROUPING_VERSION,
    ...topics.map((t) => [t.id, t.label]).sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0)),
  ])
  const { rows } = await client.query<{ signature: string; themes: Theme[] }>(
    'SELECT signature, themes FROM topic_themes WHERE chatbot_id = $1',
    [state.chatbotId],
  )
  const stored = rows[0]
  if (stored?.signature === signature) return undefined
  const previous = stored?.themes ?? []
  // The memo lives with the chatbot's cached state (topic-store.ts): a state read anew starts without one.
  state.themeSimilarities ??= new SimilarityMemo()
  const themes = groupThemes(
    topics,
    previous,
    state.themeSimilarities,
    await windowConversations(client, state, pending),
  )
  await client.query(
    `INSERT INTO topic_themes (chatbot_id, signature, themes) VALUES ($1, $2, $3)
     ON CONFLICT (chatbot_id) DO UPDATE SET signature = EXCLUDED.signature, themes = EXCLUDED.themes`,
    [state.chatbotId, signature, JSON.stringify(themes)],
  )
  if (JSON.stringify(themes) === JSON.stringify(previous)) return undefined
  return {
    type: 'analysis.themes-assigned',
    payload: { themes: themes.map((t) => ({ themeId: t.id, label: t.label, topicIds: t.topicIds })) },
  }
}

/**
 * Each conversation of the chatbot's window (topic-window.ts) with the topics its requests there are in now (their
 * latest results' topics, through merges), for the bound on a theme's share of conversations (themes.ts
 * MAX_THEME_CONVERSATION_SHARE). Read only when the chatbot is grouped anew: the themes then hold to the window
 * as it was at its last change of topics or labels.
 */
async function windowConversations(
  client: pg.ClientBase,
  state: TopicState,
  pending: ReadonlyMap<string, string>,
): Promise<string[][]> {
  const { rows } = await client.query<{ conversation_id: string; message_id: string; topic: string | null }>({
    name: 'cas-theme-window-requests',
    text: `SELECT w.conversation_id, w.message_id, r.topics[1] AS topic
       FROM topic_window w
       LEFT JOIN analysis_results r ON r.conversation_id = w.conversation_id AND r.message_id = w.message_id
      WHERE w.chatbot_id = $1`,
    values: [state.chatbotId],
  })
  const conversations = new Map<string, string[]>()
  for (const r of rows) {
    const topic =
      pending.get(pointKey({ conversationId: r.conversation_id, messageId: r.message_id })) ?? r.topic
    if (topic === null) continue
    const own = conversations.get(r.conversation_id) ?? []
    own.push(currentTopic(state, topic))
    conversations.set(r.conversation_id, own)
  }
  return [...conversations.values()]
}
