import { describe, expect, it } from 'vitest'
import type { PipelineStatus, StageFreshness } from '../api/types.ts'
import { describeFreshness, formatLag } from './freshness.ts'

const upToDate: StageFreshness = { state: 'up-to-date', behindSeconds: 1, checkedAt: '2026-03-02T10:00:00Z' }
const behind = (behindSeconds: number): StageFreshness => ({ ...upToDate, state: 'behind', behindSeconds })
const unknown: StageFreshness = { state: 'unknown', behindSeconds: null, checkedAt: null }
const status = (projection: StageFreshness, analysis: StageFreshness): PipelineStatus => ({
  at: '2026-03-02T10:00:01Z',
  projection,
  analysis: { ...analysis, analyzer: null },
})

describe('how current the figures are, in words', () => {
  it('says "Up to date" when both stages are', () => {
    expect(describeFreshness(status(upToDate, upToDate))).toEqual({ tone: 'current', text: 'Up to date' })
  })

  it('names what is behind and by how much', () => {
    expect(describeFreshness(status(upToDate, behind(240)))).toEqual({
      tone: 'behind',
      text: 'Analysis 4 min behind',
    })
    expect(describeFreshness(status(behind(12), upToDate))).toEqual({
      tone: 'behind',
      text: 'Conversations 10 s behind',
    })
    expect(describeFreshness(status(behind(12), behind(250)))).toEqual({
      tone: 'behind',
      text: 'Conversations 10 s behind · Analysis 4 min behind',
    })
  })

  it('says which stage has stopped reporting, and behind wins the tone', () => {
    expect(describeFreshness(status(unknown, upToDate))).toEqual({
      tone: 'unknown',
      text: 'Conversations status unknown',
    })
    expect(describeFreshness(status(behind(7), unknown))).toEqual({
      tone: 'behind',
      text: 'Conversations 5 s behind · Analysis status unknown',
    })
  })

  it('rounds down to steps that do not change every second', () => {
    expect([3, 5, 9, 10, 14, 59].map(formatLag)).toEqual(['3 s', '5 s', '5 s', '10 s', '10 s', '55 s'])
    expect([60, 119, 3_599].map(formatLag)).toEqual(['1 min', '1 min', '59 min'])
    expect([3_600, 47 * 3_600 + 3_599, 48 * 3_600, 10 * 86_400].map(formatLag)).toEqual([
      '1 h',
      '47 h',
      '2 days',
      '10 days',
    ])
  })
})
