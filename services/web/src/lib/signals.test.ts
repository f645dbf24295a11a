import { describe, expect, it } from 'vitest'
import { refinedByText, signalName } from './signals.ts'

describe('a conversation signal, as the dashboard names it', () => {
  it('says which LLM confirmed it, and nothing when the local model alone decided it', () => {
    expect(refinedByText({ refinedBy: 'llm:gpt-4o-mini' })).toBe('refined by gpt-4o-mini')
    expect(refinedByText({ refinedBy: 'llm:' })).toBe('refined by llm:')
    expect(refinedByText({ refinedBy: null })).toBeNull()
    expect(refinedByText({})).toBeNull()
  })

  it('names built-in signals in words and custom ones by their label', () => {
    expect(signalName({ name: 'bot_failure', label: null })).toBe('Bot failure')
    expect(signalName({ name: 'custom:asks-for-a-discount', label: 'Asks for a discount' })).toBe(
      'Asks for a discount',
    )
  })
})
