/**
 * npm run bench:signals [-- --dump]: precision and recall per conversation signal on the labelled
 * conversations of bench/data/signals (README there): the development set, the held-out one and the
 * confirmation set, with the language model of ../shared/models.
 * Targets (issue 32): precision ≥ 0.85 and recall ≥ 0.8 per built-in signal.
 */

import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import {
  CONFIRM_SIGNALS_SET,
  HELD_OUT_CUSTOM_SET,
  HELD_OUT_SIGNALS_SET,
  loadCustomSet,
  loadSignalsSet,
  measureCustomSignals,
  measureSignals,
  signalsReport,
} from './quality/signals.ts'

const { values } = parseArgs({ options: { dump: { type: 'boolean', default: false } } })
const analyzer = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(tmpdir(), 'bench-signals-models'),
  hubUrl: UNREACHABLE_HUB,
})
const report = await measureSignals(analyzer, loadSignalsSet())
const heldOut = await measureSignals(analyzer, loadSignalsSet(HELD_OUT_SIGNALS_SET))
const confirm = await measureSignals(analyzer, loadSignalsSet(CONFIRM_SIGNALS_SET))
if (values.dump) {
  console.log(
    [...report.dump, '--- held out', ...heldOut.dump, '--- confirmation', ...confirm.dump].join('\n'),
  )
}
const custom = [
  ...(await measureCustomSignals(analyzer, loadCustomSet())),
  ...(await measureCustomSignals(analyzer, loadCustomSet(HELD_OUT_CUSTOM_SET))).map((c) => ({
    ...c,
    set: 'held out',
  })),
]
console.log(signalsReport(report, custom, heldOut, confirm).join('\n'))
