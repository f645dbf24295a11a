import { describe, expect, it } from 'vitest'
import type { MessageCues } from '../../services/analysis/src/signals/cues.ts'
import { THRESHOLDS } from '../../services/analysis/src/signals/detect.ts'
import { parseThreshold, replaySignals, type ScoredConversation } from './signals-replay.ts'

const USER: MessageCues = { social: -0.3, escalation: -0.3, frustration: -0.3, resolution: -0.3 }
const BOT: MessageCues = { social: -0.3, handover: -0.3, failure: -0.3, clarification: -0.3 }
const vector = [1, 0, 0]

/** A request the assistant answers with a failure the anchors read at `failure`, labelled `labels`. */
function failing(set: string, id: string, failure: number, labels: string[]): ScoredConversation {
  return {
    set,
    id,
    labels,
    messages: [
      { role: 'user', cues: USER, vector },
      { role: 'assistant', cues: { ...BOT, failure }, vector },
    ],
  }
}

describe('replaySignals', () => {
  const conversations = [
    failing('fresh2', 'a-01', THRESHOLDS.failure + 0.01, ['bot_failure', 'abandonment']),
    failing('fresh9', 'b-01', THRESHOLDS.failure + 0.01, []),
  ]

  it('counts each half apart: a failure labelled in the older set, false in the newer one', () => {
    const { counts, errors } = replaySignals(conversations)
    expect(counts.older.bot_failure).toEqual({ tp: 1, fp: 0, fn: 0 })
    expect(counts.newer.bot_failure).toEqual({ tp: 0, fp: 1, fn: 0 })
    expect(errors).toEqual([
      { half: 'newer', set: 'fresh9', id: 'b-01', signal: 'bot_failure', kind: 'fp' },
      { half: 'newer', set: 'fresh9', id: 'b-01', signal: 'abandonment', kind: 'fp' },
    ])
  })

  it('decides with a threshold set for the replay, and restores the rules’ own after', () => {
    const before = THRESHOLDS.failure
    const { counts } = replaySignals(conversations, new Map([['failure', before + 0.02]]))
    expect(counts.older.bot_failure).toEqual({ tp: 0, fp: 0, fn: 1 })
    expect(counts.newer.bot_failure).toEqual({ tp: 0, fp: 0, fn: 0 })
    expect(THRESHOLDS.failure).toBe(before)
  })

  it('reads a message without cues (an emoji, a bare number) as the service does: nothing to read', () => {
    const conversation: ScoredConversation = {
      set: 'fresh14',
      id: 'c-01',
      labels: [],
      messages: [{ role: 'user', cues: undefined, vector: undefined }],
    }
    expect(replaySignals([conversation]).errors).toEqual([])
  })
})

describe('parseThreshold', () => {
  it('reads name=value for a threshold the rules have', () => {
    expect(parseThreshold('frustrationParting=0.8')).toEqual(['frustrationParting', 0.8])
  })

  it('refuses an unknown name, a missing or non-numeric value', () => {
    expect(() => parseThreshold('frustrationParty=0.8')).toThrow(/no threshold is named/)
    expect(() => parseThreshold('frustrationParting')).toThrow(/name=number/)
    expect(() => parseThreshold('frustrationParting=')).toThrow(/name=number/)
    expect(() => parseThreshold('frustrationParting=high')).toThrow(/name=number/)
  })
})
