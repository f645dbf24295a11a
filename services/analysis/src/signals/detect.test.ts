import { describe, expect, it } from 'vitest'
import type { MessageCues } from './cues.ts'
import { type ConversationMessage, detectSignals, type SignalSettings } from './detect.ts'

const settings: SignalSettings = { disabled: new Set(), custom: [], quietPeriodMs: 30 * 60_000 }
const at = (minute: number) => new Date(Date.UTC(2026, 10, 28, 12, minute))
const USER: MessageCues = { social: -0.3, escalation: -0.3, frustration: -0.3, resolution: -0.3 }
const BOT: MessageCues = { social: -0.3, handover: -0.3, failure: -0.3, clarification: -0.3 }

function conversation(
  ...turns: [ConversationMessage['role'], Partial<MessageCues>][]
): ConversationMessage[] {
  return turns.map(([role, cues], i) => ({
    id: `m${i}`,
    role,
    sentAt: at(i),
    cues: { ...(role === 'user' ? USER : BOT), ...cues },
  }))
}
const names = (messages: ConversationMessage[], now: Date, s = settings) =>
  detectSignals(messages, s, now).signals.map((x) => x.name)

describe('conversation signals: the decision', () => {
  it('makes an unanswered last request abandonment only once the quiet period has passed', () => {
    const messages = conversation(['user', {}])
    const before = detectSignals(messages, settings, at(29))
    expect(before).toMatchObject({ signals: [], settled: false, dueAt: at(30) })
    const after = detectSignals(messages, settings, at(30))
    expect(after).toMatchObject({ settled: true, signals: [{ name: 'abandonment', evidence: ['m0'] }] })
  })

  it('does not abandon a conversation ending on a social turn, an answer, or after a resolution', () => {
    expect(names(conversation(['user', {}], ['assistant', {}]), at(90))).toEqual([])
    expect(names(conversation(['user', {}], ['assistant', {}], ['user', { social: 0.4 }]), at(90))).toEqual(
      [],
    )
    expect(
      names(conversation(['user', {}], ['assistant', {}], ['user', { resolution: 0.3 }]), at(90)),
    ).toEqual(['resolution'])
  })

  it('abandons a conversation ending on a bot failure, not on a handover', () => {
    expect(names(conversation(['user', {}], ['assistant', { failure: 0.3 }]), at(90))).toEqual([
      'bot_failure',
      'abandonment',
    ])
    expect(names(conversation(['user', {}], ['assistant', { failure: 0.3, handover: 0.3 }]), at(90))).toEqual(
      ['escalation', 'bot_failure'],
    )
  })

  it('takes back a resolution followed by a new request or a failure', () => {
    const thanks = { resolution: 0.3 }
    expect(names(conversation(['user', thanks], ['user', {}], ['assistant', {}]), at(5))).toEqual([])
    expect(names(conversation(['user', thanks], ['assistant', { failure: 0.3 }]), at(5))).toEqual([
      'bot_failure',
    ])
  })

  it('counts a thanks by the gratitude head as resolution, and frustration only with the emotion and the anchors', () => {
    expect(names(conversation(['user', {}], ['assistant', {}], ['user', { gratitude: 0.9 }]), at(5))).toEqual(
      ['resolution'],
    )
    const complaint = conversation(['user', { frustration: -0.2, emotionFrustration: 0.95 }])
    expect(names(complaint, at(5))).toEqual([])
    const angry = conversation(['user', { frustration: 0.02, emotionFrustration: 0.9 }])
    expect(names(angry, at(5))).toEqual(['frustration'])
  })

  it('leaves out the signals a chatbot turned off, and fires its own on their margin', () => {
    const messages = conversation(['user', { escalation: 0.3, custom: { 'custom:discount': 0.2 } }])
    const own: SignalSettings = {
      ...settings,
      disabled: new Set(['escalation']),
      custom: [{ name: 'custom:discount', label: 'discount', examples: ['a discount?'] }],
    }
    expect(detectSignals(messages, own, at(5)).signals).toEqual([
      { name: 'custom:discount', label: 'discount', confidence: expect.any(Number), evidence: ['m0'] },
    ])
  })

  it('reads a request asked again as repetition: very similar, or similar and ignoring the answer', () => {
    // Unit vectors in 2-d: cos(a, b) is the similarity.
    const unit = (deg: number) =>
      Float32Array.of(Math.cos((deg * Math.PI) / 180), Math.sin((deg * Math.PI) / 180))
    const talk = (answer: number, later: number) =>
      conversation(['user', {}], ['assistant', {}], ['user', {}]).map((m, i) => ({
        ...m,
        vector: unit([0, answer, later][i]!),
      }))
    const rep = (answer: number, later: number) => names(talk(answer, later), at(5)).includes('repetition')
    expect(rep(90, 30)).toBe(true) // cos 0.87: whatever the answer
    expect(rep(150, 45)).toBe(true) // cos 0.71, the answer (cos -0.26) further than the first request
    expect(rep(60, 45)).toBe(false) // cos 0.71, but nearer the answer (0.97): a follow-up
    expect(rep(90, 55)).toBe(false) // cos 0.57: another request
  })

  it('fires nothing on messages without cues (no language model)', () => {
    const bare: ConversationMessage[] = [{ id: 'm0', role: 'user', sentAt: at(0) }]
    expect(detectSignals(bare, settings, at(90)).signals).toEqual([])
  })
})
