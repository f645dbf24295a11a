import { describe, expect, it } from 'vitest'
import { onboardingStage } from './onboarding.ts'

describe('the onboarding status', () => {
  it('says "first message received" only to someone who watched the page wait for it', () => {
    // Regression: the chatbot page said "First message received" for ever, days after the first message.
    expect(onboardingStage({ loading: false, hasConversation: true, waitedHere: false })).toBe('receiving')
    expect(onboardingStage({ loading: false, hasConversation: true, waitedHere: true })).toBe('first-message')
  })

  it('waits once it knows there is no conversation, and says nothing before', () => {
    expect(onboardingStage({ loading: true, hasConversation: false, waitedHere: false })).toBe('checking')
    expect(onboardingStage({ loading: false, hasConversation: false, waitedHere: false })).toBe('waiting')
  })
})
