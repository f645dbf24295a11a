import type { Theme, Topic, TopicsReport } from '../api/types.ts'
import { formatShare } from './format.ts'

/** Topics shown under a theme, or under none (key phrases, topics not grouped yet). */
export interface ThemeGroup {
  readonly theme: Theme | null
  /** In rank order, each with its rank on the page (1 = most conversations). */
  readonly topics: { readonly topic: Topic; readonly rank: number }[]
}

/**
 * The shown topics grouped by theme, in the order of the report's themes (most conversations first), a
 * theme without a shown topic left out; the topics in no theme last. Within a group, rank order.
 */
export function groupByTheme(report: Pick<TopicsReport, 'topics' | 'themes'>): ThemeGroup[] {
  const known = new Map(report.themes.map((t) => [`${t.chatbotId}|${t.id}`, t]))
  const byTheme = new Map<string, ThemeGroup['topics'][number][]>()
  const ungrouped: ThemeGroup['topics'][number][] = []
  report.topics.forEach((topic, i) => {
    const key = topic.theme ? `${topic.chatbotId}|${topic.theme.id}` : undefined
    if (key === undefined || !known.has(key)) {
      ungrouped.push({ topic, rank: i + 1 })
      return
    }
    const list = byTheme.get(key) ?? []
    list.push({ topic, rank: i + 1 })
    byTheme.set(key, list)
  })
  const groups: ThemeGroup[] = [...known]
    .filter(([key]) => byTheme.has(key))
    .map(([key, theme]) => ({ theme, topics: byTheme.get(key)! }))
  return ungrouped.length > 0 ? [...groups, { theme: null, topics: ungrouped }] : groups
}

/** A theme's name on the page: its label, and its chatbot's name when several chatbots are shown. */
export function themeName(theme: Pick<Theme, 'label' | 'chatbotId'>, chatbotNames?: Map<string, string>) {
  const chatbot = chatbotNames?.get(theme.chatbotId)
  return chatbot ? `${theme.label} (${chatbot})` : theme.label
}

/**
 * What the themes' shares count, said under their table: a conversation counts once in each theme it has a
 * topic in (the conversations the theme's link lists), so the shares overlap. When they add up past 100 %
 * the note says by how much, so that a large theme is not read as a part of a whole: on small multi-turn
 * chatbots a conversation touches 1.0–1.7 themes, and the largest theme held 68 % of the conversations so
 * counted where their first requests' themes gave it 60 % (bench/FINDINGS.md "what a theme's share says").
 */
export function themeSharesNote(report: Pick<TopicsReport, 'themes'>): string {
  const note =
    'Topics about one thing, grouped by their meaning. A conversation in two topics of a theme counts once; one with topics in several themes counts in each.'
  const sum = report.themes.reduce((total, t) => total + t.share, 0)
  return formatShare(sum) === formatShare(1) || sum <= 1
    ? note
    : `${note} The shares add up to ${formatShare(sum)}.`
}

/**
 * Said where topics are shown outside any theme: a chatbot's topics are grouped into themes only when they
 * fall into groups none of which holds more than half of them (themes.ts MAX_THEME_TOPIC_SHARE, at least
 * four topics) nor more than two thirds of the conversations (MAX_THEME_CONVERSATION_SHARE); on small chatbots a theme of nearly every topic told nothing (bench/FINDINGS.md "When themes
 * are worth showing"). Key phrases and topics found since the last grouping have none either.
 */
export const NO_THEME_NOTE =
  'Not grouped into themes: topics are grouped only when there are at least four and they fall into groups that each hold at most half of them and at most two thirds of the conversations. Key phrases and topics not grouped yet have no theme either.'

export const THEME_COLUMNS = ['Theme', 'Topics', 'Conversations', 'Share', 'Messages'] as const

/** The themes' totals, a row per theme, most conversations first: the Topics page's table of themes. */
export function themeRows(report: Pick<TopicsReport, 'themes'>, chatbotNames?: Map<string, string>) {
  return report.themes.map((t) => ({
    key: `${t.chatbotId}|${t.id}`,
    cells: [themeName(t, chatbotNames), t.topicIds.length, t.conversations, formatShare(t.share), t.messages],
  }))
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether a value can be a theme id (the API refuses anything else): a URL's other values are dropped. */
export function isThemeId(value: string): boolean {
  return UUID.test(value)
}

/** The label of the theme a filter names, from the themes known to the page; undefined when unknown. */
export function themeFilterLabel(
  themeId: string,
  themes: readonly Pick<Theme, 'id' | 'label'>[],
): string | undefined {
  return themeId ? themes.find((t) => t.id === themeId)?.label : undefined
}
