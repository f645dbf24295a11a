export const streamTypes = ['chatbot', 'conversation', 'analysis', 'organization'] as const

export type StreamType = (typeof streamTypes)[number]

/**
 * Default topic per stream type. Every topic is keyed by `streamId`, so one stream's events stay
 * in one partition and in order; analysis events use the conversation id as their `streamId`.
 */
export const streamTopics = {
  chatbot: 'chatbot-events',
  conversation: 'conversation-events',
  analysis: 'analysis-events',
  organization: 'organization-events',
} as const satisfies Record<StreamType, string>

/** `prefix` is prepended as given (e.g. `staging.`), so one cluster can host several environments. */
export function topicName(streamType: StreamType, prefix = ''): string {
  return `${prefix}${streamTopics[streamType]}`
}
