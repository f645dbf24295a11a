import { analysisTopicCommandUpcasters, analysisUpcasters } from './analysis-events.ts'
import { chatbotUpcasters } from './chatbot-events.ts'
import { conversationUpcasters } from './conversation-events.ts'
import { createUpcaster, type Upcaster } from './upcasting.ts'

/**
 * The upcasters of every published version that is not the latest of its type. When `X v2` is
 * published, `X v1` stays in the event definitions and `defineUpcaster(xV1, xV2, …)` is added here.
 */
const upcasters: readonly Upcaster[] = [
  ...chatbotUpcasters,
  ...conversationUpcasters,
  ...analysisUpcasters,
  ...analysisTopicCommandUpcasters,
]

/** Brings a raw event to the latest version of its type; identity for an event already there. */
export const upcast = createUpcaster(upcasters)
