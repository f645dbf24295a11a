import { describe, expect, it } from 'vitest'
import { BOT, ORG } from '../../test/fold-test-support.ts'
import { dayOf, hourOf, RollupDeltas } from './rollup-deltas.ts'

const OTHER_BOT = '0194a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2c'
const H = '2026-11-20T12:00:00.000Z'
const H2 = '2026-11-20T13:00:00.000Z'

describe('hourOf and dayOf', () => {
  it('take the UTC hour and day of timestamps in any ISO form, as Date would', () => {
    for (const t of [
      '2026-11-20T12:34:56.789Z',
      '2026-11-20T12:34:56Z',
      '2026-11-20T12:34:56.5Z',
      '2026-11-20T23:59:59.999+02:00',
      '2026-11-20T00:30:00.000-05:00',
      '0001-01-01T00:00:00.000Z',
    ]) {
      const d = new Date(t)
      d.setUTCMinutes(0, 0, 0)
      expect(hourOf(t), t).toBe(d.toISOString())
      d.setUTCHours(0)
      expect(dayOf(t), t).toBe(d.toISOString())
    }
    expect(hourOf(new Date('2026-11-20T12:34:56.789Z'))).toBe(H)
  })
})

describe('RollupDeltas', () => {
  it('sums the chatbots of an organization into its hourly row, keeping its own last active users', () => {
    // Given messages of two chatbots in one hour, and last-active moves of each and of the organization
    const deltas = new RollupDeltas()
    deltas.addMessage(ORG, BOT, H, 'user')
    deltas.addMessage(ORG, BOT, H, 'assistant')
    deltas.addMessage(ORG, OTHER_BOT, H, 'user')
    deltas.addLastActive([{ orgId: ORG, chatbotId: BOT, hour: H, delta: 1 }], 'lastActiveUsers')
    deltas.addLastActive([{ orgId: ORG, chatbotId: OTHER_BOT, hour: H, delta: 1 }], 'lastActiveUsers')
    deltas.addLastActive([{ orgId: ORG, chatbotId: null, hour: H, delta: 1 }], 'lastActiveUsers')
    // When the writes are taken
    const writes = deltas.takeWrites()
    // Then each chatbot's row has its own, and the organization's row their sums but its own end users
    expect(
      writes.stats.map((s) => [s.chatbotId, s.messages, s.user, s.assistant, s.lastActiveUsers]),
    ).toEqual([
      [BOT, 2, 1, 1, 1],
      [OTHER_BOT, 1, 1, 0, 1],
    ])
    expect(writes.orgStats).toHaveLength(1)
    expect(writes.orgStats[0]).toMatchObject({
      orgId: ORG,
      hour: H,
      messages: 3,
      user: 2,
      lastActiveUsers: 1,
    })
    // And nothing is left behind
    expect(deltas.takeWrites()).toEqual({
      stats: [],
      orgStats: [],
      hourlyTopics: [],
      dailyTopics: [],
      hourlyLanguages: [],
    })
  })

  it("counts end users' and the assistant's sentiment apart, system messages' nowhere, and topics per hour and day", () => {
    const deltas = new RollupDeltas()
    deltas.addMessage(ORG, BOT, H, 'system')
    deltas.addAnalysis(ORG, BOT, H, 'user', { score: 0.5, label: 'positive' }, ['refunds'], 1)
    deltas.addAnalysis(ORG, BOT, H2, 'user', { score: -0.5, label: 'negative' }, ['refunds'], 1)
    deltas.addAnalysis(ORG, BOT, H, 'assistant', { score: 0.25, label: 'positive' }, ['refunds'], 1)
    deltas.addAnalysis(ORG, BOT, H, 'system', { score: 1, label: 'positive' }, ['refunds'], 1)
    const writes = deltas.takeWrites()
    expect(writes.stats[0]).toMatchObject({
      hour: H,
      messages: 1,
      system: 1,
      sentimentSum: 0.5,
      sentimentCount: 1,
      positive: 1,
      assistantSentimentSum: 0.25,
      assistantSentimentCount: 1,
      assistantPositive: 1,
    })
    expect(writes.hourlyTopics.map((t) => [t.hour, t.topic, t.n, t.sentimentSum])).toEqual([
      [H, 'refunds', 1, 0.5],
      [H2, 'refunds', 1, -0.5],
    ])
    expect(writes.dailyTopics.map((t) => [t.hour, t.topic, t.n, t.sentimentSum])).toEqual([
      ['2026-11-20T00:00:00.000Z', 'refunds', 2, 0],
    ])
  })

  it('leaves out a topic whose count a re-analysis took back to nothing', () => {
    const deltas = new RollupDeltas()
    deltas.addAnalysis(ORG, BOT, H, 'user', { score: 0.5, label: 'positive' }, ['refunds'], -1)
    deltas.addAnalysis(ORG, BOT, H, 'user', { score: 0.5, label: 'positive' }, ['refunds'], 1)
    const writes = deltas.takeWrites()
    expect(writes.hourlyTopics).toEqual([])
    expect(writes.dailyTopics).toEqual([])
    expect(writes.stats[0]).toMatchObject({ sentimentCount: 0, positive: 0 })
  })

  it('keeps the end user of an activity row when a later capture in the hour comes without one', () => {
    const deltas = new RollupDeltas()
    deltas.addActivity(ORG, BOT, H, 'c1', 'u-1')
    deltas.addActivity(ORG, BOT, H, 'c1', null)
    deltas.addActivity(ORG, BOT, H2, 'c1', null)
    expect(deltas.takeActivity()).toEqual([
      { orgId: ORG, chatbotId: BOT, hour: H, conversationId: 'c1', endUserId: 'u-1' },
      { orgId: ORG, chatbotId: BOT, hour: H2, conversationId: 'c1', endUserId: null },
    ])
    expect(deltas.takeActivity()).toEqual([])
  })
})
