import { describe, expect, it } from 'vitest'
import { settingsPatch, settingsProblems, settingsToForm, splitKeywords } from './settings-form.ts'

const stored = {
  customFields: { plan: 'string' as const, seats: 'number' as const },
  topics: { refunds: ['refund', 'money back'] },
  retentionDays: 90,
  onboarded: true,
}

describe('the settings form', () => {
  it('changes nothing when saved as loaded', () => {
    expect(settingsPatch(stored, settingsToForm(stored))).toBeUndefined()
    expect(settingsPatch({}, settingsToForm({}))).toBeUndefined()
  })

  it('sends a merge patch: changed keys, null for removed ones, other settings untouched', () => {
    const form = settingsToForm(stored)
    const patch = settingsPatch(stored, {
      ...form,
      retentionDays: '',
      customFields: [
        { name: 'plan', type: 'string' },
        { name: ' vip ', type: 'boolean' },
      ],
      topics: [{ label: 'refunds', keywords: 'refund, money back, chargeback' }],
    })
    expect(patch).toEqual({
      retentionDays: null,
      customFields: { seats: null, vip: 'boolean' },
      topics: { refunds: ['refund', 'money back', 'chargeback'] },
    })
  })

  it('treats analysis as on unless it was turned off', () => {
    expect(settingsToForm({}).analysisEnabled).toBe(true)
    expect(settingsPatch({}, { ...settingsToForm({}), analysisEnabled: false })).toEqual({
      analysisEnabled: false,
    })
    expect(
      settingsPatch({ analysisEnabled: false }, { ...settingsToForm({}), analysisEnabled: true }),
    ).toEqual({
      analysisEnabled: true,
    })
  })

  it('names every problem the server would refuse', () => {
    const problems = settingsProblems({
      analysisEnabled: true,
      retentionDays: '0.5',
      customFields: [
        { name: '', type: 'string' },
        { name: 'plan', type: 'string' },
        { name: 'plan', type: 'number' },
      ],
      topics: [{ label: 'billing', keywords: ' , ' }],
    })
    expect(problems).toEqual([
      'Retention must be a whole number of days from 1 to 3650, or empty.',
      'Every custom field needs a name.',
      'The custom field "plan" is listed twice.',
      'The topic "billing" needs at least one keyword.',
    ])
    expect(settingsProblems(settingsToForm(stored))).toEqual([])
  })

  it('splits keywords on commas, trimmed and without repeats', () => {
    expect(splitKeywords(' refund,money back,, refund ')).toEqual(['refund', 'money back'])
  })
})
