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
