/**
 * What the onboarding card says: nothing while it is not known whether the chatbot has a conversation;
 * "waiting" until the first arrives; "first message received" only to someone who watched it wait, on
 * this page, as feedback on what they just did; otherwise what is being received (the last message).
 */
export type OnboardingStage = 'checking' | 'waiting' | 'first-message' | 'receiving'

export function onboardingStage(state: {
  /** True until it is known whether there is a conversation. */
  readonly loading: boolean
  readonly hasConversation: boolean
  /** This page showed "waiting" before the conversation was there. */
  readonly waitedHere: boolean
}): OnboardingStage {
  if (state.hasConversation) return state.waitedHere ? 'first-message' : 'receiving'
  return state.loading ? 'checking' : 'waiting'
}
