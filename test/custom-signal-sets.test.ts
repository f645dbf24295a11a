import { describe, expect, it } from 'vitest'
import { CUSTOM_SETS, countFirings, type Firings, loadCustomSet } from '../bench/quality/custom-signals.ts'

// The custom-signal sets of bench/data/signals (issue 32) as bench:signals lists them: their format, and that
// no signal is measured twice (a signal in a development set and again in a confirmation set would confirm
// nothing). Nothing here runs the model on a set.

describe("the chatbot's own signal sets", () => {
  it('are each a list of signals with a label, examples, paraphrases and other messages, each text once', () => {
    for (const set of CUSTOM_SETS) {
      const cases = loadCustomSet(set.file)
      expect(cases.length, set.name).toBeGreaterThan(0)
      for (const c of cases) {
        const where = `${set.name}: ${c.label}`
        expect(c.label.trim().length, where).toBeGreaterThan(0)
        for (const texts of [c.examples, c.positives, c.negatives]) {
          expect(texts.length, where).toBeGreaterThan(0)
          for (const text of texts) expect(text.trim().length, where).toBeGreaterThan(0)
        }
        const all = [...c.examples, ...c.positives, ...c.negatives]
        expect(new Set(all).size, `${where}: a text in two roles`).toBe(all.length)
      }
    }
  })

  it('measure each signal once, and hold development and confirmation sets', () => {
    const labels = CUSTOM_SETS.flatMap((set) => loadCustomSet(set.file).map((c) => c.label.toLowerCase()))
    expect(new Set(labels).size).toBe(labels.length)
    expect(CUSTOM_SETS.some((set) => set.development)).toBe(true)
    expect(CUSTOM_SETS.some((set) => !set.development)).toBe(true)
  })

  it("count a set read as one chatbot: its own signal's firings, and every other signal's as false", () => {
    const x: Firings = { tp: 0, fp: 0, other: 0, positives: 0 }
    const a = { name: 'custom:a' }
    const b = { name: 'custom:b' }
    const c = { name: 'custom:c' }
    countFirings(x, [a, b], 'custom:a', true)
    countFirings(x, [], 'custom:a', true)
    countFirings(x, [a, b, c], 'custom:a', false)
    countFirings(x, [c], 'custom:b', false)
    expect(x).toEqual({ tp: 1, fp: 1, other: 4, positives: 2 })
  })
})
