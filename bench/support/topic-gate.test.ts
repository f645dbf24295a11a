import { afterEach, beforeAll, expect, it, vi } from 'vitest'
import type { EmbeddingModel } from '../../services/analysis/src/providers/embedding-model.ts'
import type { GateAnchors } from '../../services/analysis/src/topics/requests.ts'
import { isSocialFormula } from '../../services/analysis/src/topics/social-formulas.ts'
import { describeWithTestModel, loadTestEmbeddingModel } from '../../services/analysis/test/test-model.ts'
import { type GateRules, gateAnchors, reportWithoutAndWith } from './topic-gate.ts'

const NO_PLANS = () => new Set<string>()
const WITHOUT: GateRules = { plans: NO_PLANS, formula: () => false }
const WITH: GateRules = { plans: NO_PLANS, formula: isSocialFormula }
/** Asked after a request: the thanks makes a topic only without the social formulae, the request both ways. */
const SET = {
  name: 'after a request',
  items: [
    { text: 'muchas gracias, eso es todo', where: 'es-1' },
    { text: 'where is my parcel? it has not arrived', where: 'en-1' },
  ],
  later: true,
}

describeWithTestModel("the rules' benches: each set through the gate without and with a rule", () => {
  let model: EmbeddingModel
  let anchors: GateAnchors
  beforeAll(async () => {
    model = await loadTestEmbeddingModel()
    anchors = await gateAnchors(model)
  })
  afterEach(() => vi.restoreAllMocks())

  it('prints a row a set and lists the texts the rule takes a topic from, then the set’s own lines', async () => {
    const printed = vi.spyOn(console, 'log').mockImplementation(() => {})
    const seen: { before: readonly boolean[]; after: readonly boolean[] }[] = []
    const lines = await reportWithoutAndWith(
      model,
      anchors,
      [SET],
      { without: WITHOUT, with: WITH },
      (set, before, after) => {
        seen.push({ before, after })
        return [`- own line of ${set.name}`]
      },
    )
    expect(printed.mock.calls.map((c) => c[0])).toEqual([
      '| set | messages | topic without | topic with | lost | gained |',
      '|---|--:|--:|--:|--:|--:|',
      '| after a request | 2 | 2 | 1 | 1 | 0 |',
    ])
    expect(lines).toEqual([
      '- lost, after a request: "muchas gracias, eso es todo" (es-1)',
      '- own line of after a request',
    ])
    expect(seen).toEqual([{ before: [true, true], after: [false, true] }])
  })

  it('lists the texts a rule gives a topic to as gained', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {})
    const lines = await reportWithoutAndWith(model, anchors, [SET], { without: WITH, with: WITHOUT })
    expect(lines).toEqual(['- gained, after a request: "muchas gracias, eso es todo" (es-1)'])
  })
})
