import { describe, expect, it } from 'vitest'
import {
  analyticsQuery,
  intervalsFor,
  selectionDays,
  selectionFromSearch,
  selectionProblem,
  selectionToSearch,
} from './analytics-range.ts'

describe('the analytics selection', () => {
  it('defaults to the last 30 days by day, and survives the page URL', () => {
    const s = selectionFromSearch('')
    expect(s).toEqual({ chatbotId: '', range: '30', from: '', to: '', interval: 'day' })
    const custom = {
      chatbotId: 'b1',
      range: 'custom',
      from: '2026-01-01',
      to: '2026-01-03',
      interval: 'hour' as const,
    }
    expect(selectionFromSearch(`?${selectionToSearch(custom)}`)).toEqual(custom)
  })

  it('falls back from choices the API would refuse', () => {
    expect(selectionFromSearch('?range=12&interval=month')).toMatchObject({ range: '30', interval: 'day' })
    expect(selectionFromSearch('?range=custom&from=2026-01-01')).toMatchObject({ range: '30', from: '' })
    // Hour buckets only for a week or less.
    expect(selectionFromSearch('?range=30&interval=hour').interval).toBe('day')
    expect(selectionFromSearch('?range=7&interval=hour').interval).toBe('hour')
  })

  it('offers hours only for ranges of a week or less', () => {
    const s = selectionFromSearch('?range=7')
    expect(intervalsFor(s)).toEqual(['hour', 'day', 'week'])
    expect(intervalsFor({ ...s, range: '90' })).toEqual(['day', 'week'])
    expect(selectionDays({ ...s, range: 'custom', from: '2026-02-01', to: '2026-02-07' })).toBe(7)
    expect(intervalsFor({ ...s, range: 'custom', from: '2026-02-01', to: '2026-02-08' })).toEqual([
      'day',
      'week',
    ])
  })

  it('asks the API for days back, or for whole local days', () => {
    expect(analyticsQuery(selectionFromSearch('?range=7&chatbotId=b1'), 'Europe/Paris')).toEqual({
      chatbotId: 'b1',
      tz: 'Europe/Paris',
      days: 7,
    })
    const custom = analyticsQuery(
      { chatbotId: '', range: 'custom', from: '2026-02-01', to: '2026-02-02', interval: 'day' },
      'UTC',
    )
    expect(custom.chatbotId).toBeUndefined()
    if (!('from' in custom)) throw new Error('a custom range is sent as from/to')
    const from = new Date(String(custom.from))
    const to = new Date(String(custom.to))
    expect([from.getDate(), from.getHours()]).toEqual([1, 0])
    // Exclusive end: the midnight after the last day.
    expect([to.getDate(), to.getHours(), to.getMinutes()]).toEqual([3, 0, 0])
  })

  it('explains a custom range it cannot send', () => {
    const base = { chatbotId: '', range: 'custom', interval: 'day' as const }
    expect(selectionProblem({ ...base, from: '', to: '2026-01-01' })).toMatch(/both/)
    expect(selectionProblem({ ...base, from: '2026-02-01', to: '2026-01-01' })).toMatch(/on or before/)
    expect(selectionProblem({ ...base, from: '2025-01-01', to: '2026-01-01' })).toMatch(/at most 365/)
    expect(selectionProblem({ ...base, from: '2025-01-02', to: '2026-01-01' })).toBeUndefined()
  })
})
