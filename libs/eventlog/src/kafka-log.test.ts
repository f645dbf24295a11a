import { logLevel } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { kafkaLogCreator } from './kafka-log.ts'

function logged() {
  const calls: [string, object, string][] = []
  const at = (level: string) => (fields: object, message: string) => void calls.push([level, fields, message])
  const log = kafkaLogCreator({ error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') })(
    logLevel.ERROR,
  )
  const entry = (namespace: string, level: logLevel, message: string, extra: object = {}) =>
    log({ namespace, level, label: '', log: { timestamp: '', logger: 'kafkajs', message, ...extra } })
  return { calls, entry }
}

describe("kafkajs's log lines", () => {
  it('go to the logger at their level, namespaced, with their fields', () => {
    const { calls, entry } = logged()
    entry('Consumer', logLevel.ERROR, 'Crash: KafkaJSNumberOfRetriesExceeded', { groupId: 'projector' })
    entry('BrokerPool', logLevel.WARN, 'Metadata refresh failed')
    expect(calls).toEqual([
      [
        'error',
        { groupId: 'projector', logger: 'kafkajs' },
        '[Consumer] Crash: KafkaJSNumberOfRetriesExceeded',
      ],
      ['warn', { logger: 'kafkajs' }, '[BrokerPool] Metadata refresh failed'],
    ])
  })

  it("take a broker's answer that a leader or coordinator is not settled yet to debug, and no other", () => {
    const { calls, entry } = logged()
    for (const error of [
      'This server is not the leader for that topic-partition',
      'The group coordinator is not available',
      'This server does not host this topic-partition',
    ])
      entry('Connection', logLevel.ERROR, 'Response ListOffsets(key: 2, version: 3)', { error })
    entry('Connection', logLevel.ERROR, 'Response Produce(key: 0, version: 7)', {
      error: 'Not authorized to access topics: [Topic authorization failed.]',
    })
    expect(calls.map(([level]) => level)).toEqual(['debug', 'debug', 'debug', 'error'])
  })

  it("take a consumer's crash on such an answer, and the restart it announces, to debug; any other crash stays", () => {
    const { calls, entry } = logged()
    const crash = (groupId: string, message: string) =>
      entry('Consumer', logLevel.ERROR, `Crash: KafkaJSProtocolError: ${message}`, { groupId })
    const restart = (groupId: string) =>
      entry('Consumer', logLevel.ERROR, 'Restarting the consumer in 100ms', { groupId })
    crash('projector', "The coordinator is loading and hence can't process requests for this group")
    restart('projector')
    crash('analysis', 'Not authorized to access group: Group authorization failed.')
    restart('analysis')
    restart('projector')
    expect(calls.map(([level, fields]) => [level, (fields as { groupId: string }).groupId])).toEqual([
      ['debug', 'projector'],
      ['debug', 'projector'],
      ['error', 'analysis'],
      ['error', 'analysis'],
      ['error', 'projector'],
    ])
  })
})
