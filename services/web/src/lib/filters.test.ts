import { describe, expect, it } from 'vitest'
import {
  activeFilterCount,
  conversationQuery,
  endOfDay,
  filtersFromSearch,
  filtersProblem,
  filtersToggleLabel,
  filtersToSearch,
  hasFilters,
  NO_FILTERS,
  startOfDay,
} from './filters.ts'

describe('conversation filters', () => {
  it('survive the round trip through the page URL', () => {
    const filters = {
      chatbotId: '0f8d7c4e-1a2b-4c3d-9e8f-001122334455',
      from: '2026-03-01',
      to: '2026-03-31',
      sentiment: 'negative' as const,
      topic: 'refunds',
      theme: '4f3e1a0b-7c2d-4e5f-8a9b-0c1d2e3f4a5b',
      userId: 'user 42',
      q: 'money back',
      signal: 'custom:asks-for-a-discount',
      since: '2026-03-01T05:00:00.000Z',
      until: '2026-03-08T05:00:00.000Z',
    }
    expect(filtersFromSearch(`?${filtersToSearch(filters)}`)).toEqual(filters)
    expect(filtersToSearch(NO_FILTERS).toString()).toBe('')
    expect(hasFilters(NO_FILTERS)).toBe(false)
    expect(hasFilters({ ...NO_FILTERS, q: 'x' })).toBe(true)
  })

  it('drop values the API would refuse instead of sending them', () => {
    expect(
      filtersFromSearch(
        '?sentiment=angry&from=yesterday&to=2026-1-2&topic=%20billing%20&theme=cards&signal=angry',
      ),
    ).toEqual({
      ...NO_FILTERS,
      topic: 'billing',
    })
  })

  it('send days as the whole day in the viewer zone, and only what is set', () => {
    const query = conversationQuery(
      { ...NO_FILTERS, from: '2026-03-01', to: '2026-03-02', q: ' refund ' },
      20,
    )
    expect(query).toEqual({
      chatbotId: undefined,
      from: startOfDay('2026-03-01'),
      to: endOfDay('2026-03-02'),
      sentiment: undefined,
      topic: undefined,
      theme: undefined,
      userId: undefined,
      q: 'refund',
      signal: undefined,
      limit: 20,
      cursor: undefined,
    })
    const from = new Date(String(query.from))
    const to = new Date(String(query.to))
    expect([from.getFullYear(), from.getMonth(), from.getDate(), from.getHours(), from.getMinutes()]).toEqual(
      [2026, 2, 1, 0, 0],
    )
    expect([to.getDate(), to.getHours(), to.getMinutes(), to.getSeconds(), to.getMilliseconds()]).toEqual([
      2, 23, 59, 59, 999,
    ])
    expect(conversationQuery(NO_FILTERS, 5, 'abc')).toMatchObject({ limit: 5, cursor: 'abc' })
  })

  it("send an Analytics link's exact range as it was counted, its end excluded", () => {
    // Regression: the Analytics and Topics pages' links carried no range, so "the bot failed in 3 of 10
    // conversations" over the last 7 days led to every such conversation ever.
    const linked = filtersFromSearch(
      '?topic=t1&signal=bot_failure&since=2026-03-01T05:00:00.000Z&until=2026-03-08T05:00:00.000Z',
    )
    expect(conversationQuery(linked, 20)).toMatchObject({
      from: '2026-03-01T05:00:00.000Z',
      to: '2026-03-08T04:59:59.999Z',
      topic: 't1',
      signal: 'bot_failure',
    })
    // Days chosen as well: the narrower bound of each end.
    const narrowed = conversationQuery({ ...linked, from: '2026-03-03', to: '2026-03-20' }, 20)
    expect(narrowed.from).toBe(startOfDay('2026-03-03'))
    expect(narrowed.to).toBe('2026-03-08T04:59:59.999Z')
    // The exact range counts as one filter; anything but an ISO instant is dropped.
    expect(activeFilterCount(linked)).toBe(3)
    expect(filtersFromSearch('?since=2026-03-01&until=yesterday')).toEqual(NO_FILTERS)
  })

  it('say when the days are the wrong way round', () => {
    expect(filtersProblem({ ...NO_FILTERS, from: '2026-03-02', to: '2026-03-01' })).toMatch(/on or before/)
    expect(filtersProblem({ ...NO_FILTERS, from: '2026-03-01', to: '2026-03-01' })).toBeUndefined()
  })

  it('are counted for the Filters toggle that hides them on a phone', () => {
    // Regression: on a phone the filters filled the first screen; collapsed, the toggle says how many apply.
    expect(activeFilterCount(NO_FILTERS)).toBe(0)
    expect(filtersToggleLabel(NO_FILTERS)).toBe('Filters')
    const two = filtersFromSearch('?sentiment=negative&q=refund&topic=%20')
    expect(activeFilterCount(two)).toBe(2)
    expect(filtersToggleLabel(two)).toBe('Filters (2 active)')
    expect(filtersToggleLabel({ ...two, from: '2026-03-01', to: '2026-03-31' })).toBe('Filters (4 active)')
  })
})
