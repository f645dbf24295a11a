import { describe, expect, it } from 'vitest'
import type { Theme, Topic } from '../api/types.ts'
import { formatShare } from './format.ts'
import {
  groupByTheme,
  isThemeId,
  THEME_COLUMNS,
  themeFilterLabel,
  themeRows,
  themeSharesNote,
} from './themes.ts'

const BOT = '6f1c1d7e-0000-4000-8000-000000000001'
const OTHER_BOT = '6f1c1d7e-0000-4000-8000-000000000002'
const CARDS = '4f3e1a0b-7c2d-4e5f-8a9b-0c1d2e3f4a5b'
const TRANSFERS = '4f3e1a0b-7c2d-4e5f-8a9b-0c1d2e3f4a5c'

function topic(id: string, theme: { id: string; label: string } | null, chatbotId = BOT): Topic {
  return {
    id,
    chatbotId,
    label: id,
    keywords: [],
    configured: false,
    theme,
    conversations: 1,
    messages: 1,
    share: 0.1,
    averageSentiment: null,
    trend: [],
    examples: [],
  }
}

function theme(id: string, label: string, topicIds: string[], conversations: number, chatbotId = BOT): Theme {
  return {
    id,
    chatbotId,
    label,
    conversations,
    messages: conversations * 2,
    share: conversations / 10,
    topicIds,
  }
}

const cards = { id: CARDS, label: 'Card' }
const transfers = { id: TRANSFERS, label: 'Transfer' }

describe('groupByTheme', () => {
  it("groups the shown topics under their themes, in the themes' order, keeping each topic's rank", () => {
    const groups = groupByTheme({
      themes: [theme(TRANSFERS, 'Transfer', ['fee'], 5), theme(CARDS, 'Card', ['delivery', 'pin'], 3)],
      topics: [topic('delivery', cards), topic('fee', transfers), topic('phrase', null), topic('pin', cards)],
    })
    expect(
      groups.map((g) => [g.theme?.label ?? null, g.topics.map((t) => `${t.rank}. ${t.topic.id}`)]),
    ).toEqual([
      ['Transfer', ['2. fee']],
      ['Card', ['1. delivery', '4. pin']],
      [null, ['3. phrase']],
    ])
  })

  it('leaves out a theme none of whose topics is shown, and keeps two chatbots apart', () => {
    const groups = groupByTheme({
      themes: [theme(CARDS, 'Card', ['a'], 3), theme(TRANSFERS, 'Transfer', ['x'], 1)],
      // Another chatbot's topic naming a theme id this report has not for it: in no theme.
      topics: [topic('a', cards), topic('b', cards, OTHER_BOT)],
    })
    expect(groups.map((g) => [g.theme?.label ?? null, g.topics.map((t) => t.topic.id)])).toEqual([
      ['Card', ['a']],
      [null, ['b']],
    ])
  })
})

describe('theme table and filter', () => {
  it("gives every theme's totals a row, its chatbot named when several are shown", () => {
    const rows = themeRows({ themes: [theme(CARDS, 'Card', ['a', 'b'], 3)] }, new Map([[BOT, 'Support']]))
    expect(THEME_COLUMNS).toHaveLength(rows[0]!.cells.length)
    expect(rows).toEqual([{ key: `${BOT}|${CARDS}`, cells: ['Card (Support)', 2, 3, '30%', 6] }])
  })

  it('takes only ids for the theme filter, and names a known theme by its label', () => {
    expect(isThemeId(CARDS)).toBe(true)
    expect(isThemeId('cards')).toBe(false)
    expect(themeFilterLabel(CARDS, [cards, transfers])).toBe('Card')
    expect(themeFilterLabel(TRANSFERS, [cards])).toBeUndefined()
    expect(themeFilterLabel('', [cards])).toBeUndefined()
  })
})

// trial5: one theme showed 87 % of a small shop's conversations; a conversation counts in every theme it has a
// topic in, and the page did not say so, so the share read as a part of a whole.
describe('themeSharesNote', () => {
  it('says a conversation counts in each of its themes, and what the shares add up to past 100 %', () => {
    const note = themeSharesNote({
      themes: [theme(CARDS, 'Card', ['a'], 8), theme(TRANSFERS, 'Transfer', ['b'], 6)],
    })
    expect(note).toContain('one with topics in several themes counts in each')
    expect(note).toContain(`The shares add up to ${formatShare(1.4)}.`)
  })

  it('names no sum when the shares add up to 100 % or less', () => {
    for (const counts of [
      [4, 3],
      [6, 4],
    ]) {
      const note = themeSharesNote({
        themes: [theme(CARDS, 'Card', ['a'], counts[0]!), theme(TRANSFERS, 'Transfer', ['b'], counts[1]!)],
      })
      expect(note).toContain('counts in each')
      expect(note).not.toContain('add up to')
    }
    expect(themeSharesNote({ themes: [] })).not.toContain('add up to')
  })
})
