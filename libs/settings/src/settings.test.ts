import { describe, expect, it } from 'vitest'
import { analysisEnabled, MAX_RETENTION_DAYS, MAX_SETTINGS_DEPTH } from './limits.ts'
import {
  chatbotSignals,
  chatbotTopics,
  customFieldSchema,
  retentionDays,
  retentionDaysSql,
  settingsSchema,
} from './settings.ts'

describe('chatbot settings', () => {
  it('reads analysisEnabled as on unless it is false', () => {
    expect(analysisEnabled({})).toBe(true)
    expect(analysisEnabled({ analysisEnabled: true })).toBe(true)
    expect(analysisEnabled({ analysisEnabled: false })).toBe(false)
    expect(analysisEnabled({ analysisEnabled: 'no' })).toBe(true)
  })

  it('reads the custom-field schema, empty when none (or a malformed one) is stored', () => {
    expect(customFieldSchema({ customFields: { plan: 'string' } })).toEqual({ plan: 'string' })
    expect(customFieldSchema({})).toEqual({})
    expect(customFieldSchema({ customFields: { plan: 'date' } })).toEqual({})
  })

  it("reads the chatbot's own topics only when they are label → keywords", () => {
    expect(chatbotTopics({ topics: { refunds: ['refund', 'money back'] } })).toEqual({
      refunds: ['refund', 'money back'],
    })
    expect(chatbotTopics({})).toBeUndefined()
    expect(chatbotTopics({ topics: ['refund'] })).toBeUndefined()
    expect(chatbotTopics({ topics: { refunds: [1] } })).toBeUndefined()
  })

  it('accepts free-form settings but types the keys it reads, within its bounds', () => {
    expect(settingsSchema.safeParse({ onboarded: true, retentionDays: 30 }).success).toBe(true)
    expect(settingsSchema.safeParse({ retentionDays: MAX_RETENTION_DAYS + 1 }).success).toBe(false)
    expect(settingsSchema.safeParse({ retentionDays: 1.5 }).success).toBe(false)
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < MAX_SETTINGS_DEPTH; i++) deep = { a: deep }
    expect(settingsSchema.safeParse(deep).success).toBe(false)
  })

  it('refuses two custom signals of one name and examples with nothing visible on writes, yet reads them when stored', () => {
    const stored = {
      signals: {
        disabled: ['frustration'],
        custom: [
          { label: 'Discount', examples: ['a coupon?'] },
          { label: 'discount!', examples: ['\u200b'] },
        ],
      },
    }
    const written = settingsSchema.safeParse(stored)
    expect(written.success).toBe(false)
    expect(written.error?.issues.map((i) => i.path)).toEqual([
      ['signals', 'custom', 1, 'examples', 0],
      ['signals', 'custom', 1, 'label'],
    ])
    // Settings stored before the rules keep their meaning: the first of one name, the rest as given.
    expect(chatbotSignals(stored)).toMatchObject({
      disabled: ['frustration'],
      custom: [{ name: 'custom:discount', label: 'Discount' }],
    })
  })

  it('reads retentionDays as the sweep does: a whole number of days, else none', () => {
    expect(retentionDays({ retentionDays: 90 })).toBe(90)
    for (const stored of [{}, { retentionDays: '90' }, { retentionDays: null }, { retentionDays: 1.5 }])
      expect(retentionDays(stored), JSON.stringify(stored)).toBeUndefined()
  })

  it('gives the retention sweep its rule as SQL over the settings column', () => {
    expect(retentionDaysSql('c.settings')).toBe(
      "CASE WHEN jsonb_typeof(c.settings -> 'retentionDays') = 'number' THEN (c.settings ->> 'retentionDays')::int END",
    )
  })
})
