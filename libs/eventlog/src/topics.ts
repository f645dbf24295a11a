import { type StreamType, streamTopics, streamTypes, topicName } from '@cas/events'

/** The Kafka topic carrying a stream type's events; `prefix` separates environments sharing a cluster. */
export const topicFor = topicName

export function streamTypeOfTopic(topic: string, prefix = ''): StreamType | undefined {
  if (!topic.startsWith(prefix)) return undefined
  const bare = topic.slice(prefix.length)
  return streamTypes.find((t) => streamTopics[t] === bare)
}

export const STREAM_TYPES: readonly StreamType[] = streamTypes
