import { describe, expect, it } from 'vitest'
import { streamTopics, streamTypes, topicName } from './topics.ts'

describe('topics', () => {
  it('names one default topic per stream type', () => {
    expect(streamTypes.map((streamType) => topicName(streamType))).toEqual([
      'chatbot-events',
      'conversation-events',
      'analysis-events',
      'organization-events',
    ])
    expect(Object.keys(streamTopics)).toEqual([...streamTypes])
  })

  it('prepends the environment prefix as given', () => {
    expect(topicName('analysis', 'staging.')).toBe('staging.analysis-events')
    expect(topicName('conversation', '')).toBe('conversation-events')
  })
})
