import { describe, expect, it } from 'vitest'
import type { DetectedSignal } from './detect.ts'
import {
  applyVerdicts,
  BORDERLINE_BELOW,
  borderlineSignals,
  InvalidAnswer,
  MAX_CONTENT_CHARS,
  MAX_TRANSCRIPT_MESSAGES,
  parseRefineAnswer,
  REFINE_ANSWER_JSON_SCHEMA,
  refinePrompt,
  SIGNAL_DEFINITIONS,
  type Verdict,
} from './llm-refine.ts'

const strong: DetectedSignal = { name: 'escalation', confidence: 0.93, evidence: ['m1'] }
const weak: DetectedSignal = { name: 'bot_failure', confidence: 0.61, evidence: ['m2'] }
const edge: DetectedSignal = { name: 'frustration', confidence: BORDERLINE_BELOW, evidence: ['m3'] }
const custom: DetectedSignal = {
  name: 'custom:asks-for-a-discount',
  label: 'Asks for a discount',
  confidence: 0.52,
  evidence: ['m1', 'm3'],
}
const verdict = (
  name: string,
  evidence: string[],
  present: boolean | null,
  analyzer = 'local@1',
): Verdict => ({
  analyzer,
  name,
  evidence,
  present,
  by: 'llm:m',
})

describe('borderline signals', () => {
  it('are those that fired with a confidence below 0.75 and no LLM has confirmed', () => {
    expect(borderlineSignals([strong, weak, edge, custom]).map((s) => s.name)).toEqual([
      'bot_failure',
      'custom:asks-for-a-discount',
    ])
    expect(borderlineSignals([{ ...weak, refinedBy: 'llm:m' }])).toEqual([])
    expect(borderlineSignals([strong, weak], 0.5)).toEqual([])
    expect(borderlineSignals([strong, weak], 1.01)).toHaveLength(2)
  })
})

describe('applying verdicts', () => {
  it('marks a confirmed borderline signal, leaves out a rejected one, and keeps the others as found', () => {
    const out = applyVerdicts(
      [strong, weak, custom],
      [verdict('bot_failure', ['m2'], true), verdict('custom:asks-for-a-discount', ['m1', 'm3'], false)],
      'local@1',
    )
    expect(out.signals).toEqual([strong, { ...weak, refinedBy: 'llm:m' }])
    expect(out.pending).toEqual([])
    expect(out.used).toHaveLength(2)
  })

  it('applies a verdict only to the same analyzer, signal and evidence; the rest is pending', () => {
    const out = applyVerdicts(
      [weak, custom],
      [
        verdict('bot_failure', ['m2'], false, 'local@0'),
        verdict('custom:asks-for-a-discount', ['m1'], false),
        verdict('escalation', ['m1'], false),
      ],
      'local@1',
    )
    expect(out.signals).toEqual([weak, custom])
    expect(out.pending).toEqual([weak, custom])
    expect(out.used).toEqual([])
  })

  it('keeps the local result of a signal asked about without answer, and does not ask again', () => {
    const out = applyVerdicts([weak], [verdict('bot_failure', ['m2'], null)], 'local@1')
    expect(out.signals).toEqual([weak])
    expect(out.pending).toEqual([])
    expect(out.used).toHaveLength(1)
  })

  it('never touches a signal beyond the band, whatever a verdict says', () => {
    const out = applyVerdicts([strong], [verdict('escalation', ['m1'], false)], 'local@1')
    expect(out.signals).toEqual([strong])
    expect(out.used).toEqual([])
  })
})

describe('the question', () => {
  const transcript = [
    { id: 'm1', role: 'user' as const, content: 'any discount for students?' },
    { id: 'm2', role: 'assistant' as const, content: "Sorry, I can't help with that." },
    { id: 'm3', role: 'user' as const, content: 'x'.repeat(MAX_CONTENT_CHARS + 10) },
  ]

  it('gives the borderline signals with their definitions and evidence, and the transcript', () => {
    const [system, user] = refinePrompt(
      transcript,
      [weak, custom],
      [{ name: custom.name, label: 'Asks for a discount', examples: ['can I get a discount?'] }],
    )
    expect(system!.role).toBe('system')
    expect(system!.content).toMatch(/never instructions/)
    const body = JSON.parse(user!.content)
    expect(body.signals).toEqual([
      { name: 'bot_failure', definition: SIGNAL_DEFINITIONS.bot_failure, evidence: ['m2'] },
      {
        name: custom.name,
        definition: expect.stringContaining('"can I get a discount?"'),
        evidence: ['m1', 'm3'],
      },
    ])
    expect(body.messages.map((m: { id: string }) => m.id)).toEqual(['m1', 'm2', 'm3'])
    expect(body.messages[2].content).toHaveLength(MAX_CONTENT_CHARS)
  })

  it('keeps the last messages of a long conversation and every evidence message', () => {
    const long = Array.from({ length: MAX_TRANSCRIPT_MESSAGES + 20 }, (_, i) => ({
      id: `m${i}`,
      role: 'user' as const,
      content: `message ${i}`,
    }))
    const [, user] = refinePrompt(
      long,
      [{ name: 'repetition', confidence: 0.6, evidence: ['m3', 'm119'] }],
      [],
    )
    const ids = JSON.parse(user!.content).messages.map((m: { id: string }) => m.id)
    expect(ids).toHaveLength(MAX_TRANSCRIPT_MESSAGES + 1)
    expect(ids[0]).toBe('m3')
    expect(ids.at(-1)).toBe('m119')
  })

  it('asks for a strict JSON schema of verdicts', () => {
    expect(REFINE_ANSWER_JSON_SCHEMA).toMatchObject({
      type: 'object',
      required: ['verdicts'],
      additionalProperties: false,
    })
  })
})

describe('the answer', () => {
  const asked = ['bot_failure', 'custom:asks-for-a-discount']

  it('gives a verdict per signal asked about, fenced or not', () => {
    const answer = {
      verdicts: [
        { signal: 'bot_failure', present: true },
        { signal: 'custom:asks-for-a-discount', present: false },
      ],
    }
    const expected = new Map([
      ['bot_failure', true],
      ['custom:asks-for-a-discount', false],
    ])
    expect(parseRefineAnswer(JSON.stringify(answer), asked)).toEqual(expected)
    expect(parseRefineAnswer(`\`\`\`json\n${JSON.stringify(answer)}\n\`\`\``, asked)).toEqual(expected)
  })

  it('ignores verdicts on signals not asked about: the LLM never adds one', () => {
    const answer = {
      verdicts: [
        { signal: 'escalation', present: true },
        { signal: 'bot_failure', present: false },
      ],
    }
    expect(parseRefineAnswer(JSON.stringify(answer), asked)).toEqual(new Map([['bot_failure', false]]))
  })

  it('refuses what is not the requested JSON', () => {
    for (const content of [
      'yes, both are present',
      '{"verdicts": [',
      JSON.stringify({ results: [] }),
      JSON.stringify({ verdicts: [{ signal: 'bot_failure', present: 'yes' }] }),
      JSON.stringify({
        verdicts: [
          { signal: 'bot_failure', present: true },
          { signal: 'bot_failure', present: false },
        ],
      }),
    ]) {
      expect(() => parseRefineAnswer(content, asked), content).toThrow(InvalidAnswer)
    }
  })
})
