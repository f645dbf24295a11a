import { createHash } from 'node:crypto'

/** A UUID-shaped (version 5 layout) id derived from `text`: the same text, the same id, in every process. */
export function uuidFromText(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** The id of one of a chatbot's own topics (settings.topics): its label names it, whatever its keywords. */
export function configuredTopicId(chatbotId: string, label: string): string {
  return uuidFromText(
    `configured-topic\u0000${chatbotId}\u0000${label.trim().replace(/\s+/g, ' ').toLowerCase()}`,
  )
}
