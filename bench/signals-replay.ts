/**
 * npx tsx bench/signals-replay.ts --score: scores every development set of bench/data/signals (never a blind
 * one) with the model of ../shared/models once and stores each message's cues and vector in
 * bench/.cache/signals-replay.json (about a minute).
 * npx tsx bench/signals-replay.ts [--threshold name=value ...] [--errors]: decides the built-in signals again
 * from that store with the rules of services/analysis/src/signals/detect.ts, some thresholds set to other
 * values, in seconds: errors and fp / fn per signal on the older half (development … fresh6) and the newer
 * (fresh7 …), the halves a constant is chosen on and confirmed on (bench/FINDINGS.md); --errors lists them by
 * conversation, to diff two runs. Without --threshold it gives bench:signals' errors exactly (signals.ts scores and
 * decides both). The store holds the cues of the rules' version it was scored at; rescore after a change to cues.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { embedSignalAnchors } from '../services/analysis/src/signals/cues.ts'
import { BUILTIN_SIGNALS, SIGNALS_VERSION } from '../services/analysis/src/signals/detect.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { loadSignalsSet, openSignalsSets, scoreConversation } from './quality/signals.ts'
import {
  loadReplayStore,
  parseThreshold,
  REPLAY_STORE,
  replaySignals,
  type ScoredConversation,
} from './quality/signals-replay.ts'

const { values } = parseArgs({
  options: {
    score: { type: 'boolean', default: false },
    threshold: { type: 'string', multiple: true, default: [] },
    errors: { type: 'boolean', default: false },
  },
})

if (values.score) {
  const analyzer = await createSemanticAnalyzer({
    modelDir: TEST_MODEL_DIR,
    cacheDir: path.join(tmpdir(), 'bench-signals-models'),
    hubUrl: UNREACHABLE_HUB,
  })
  const anchors = await embedSignalAnchors(analyzer.semantic.embedTexts)
  const sets = openSignalsSets()
  const conversations: ScoredConversation[] = []
  for (const set of sets) {
    for (const c of loadSignalsSet(set.file)) {
      const scored = await scoreConversation(analyzer, anchors, c)
      conversations.push({
        set: set.name,
        id: c.id,
        labels: c.signals,
        messages: c.messages.map(([role], i) => ({
          role,
          cues: scored[i]?.cues,
          vector: scored[i] === undefined ? undefined : Array.from(scored[i]!.vector),
        })),
      })
    }
  }
  mkdirSync(path.dirname(REPLAY_STORE), { recursive: true })
  writeFileSync(REPLAY_STORE, JSON.stringify({ version: SIGNALS_VERSION, conversations }))
  console.log(
    `${conversations.length} conversations of ${sets.length} sets scored at signals-v${SIGNALS_VERSION}`,
  )
  process.exit(0)
}

const store = loadReplayStore()
if (store.version !== SIGNALS_VERSION)
  console.log(
    `(scored at signals-v${store.version}, the rules are v${SIGNALS_VERSION}: --score again if cues changed)`,
  )
const overrides = new Map(values.threshold.map(parseThreshold))
const { counts, errors } = replaySignals(store.conversations, overrides)
for (const half of ['older', 'newer'] as const) {
  const bySignal = BUILTIN_SIGNALS.map((s) => `${s} ${counts[half][s]!.fp} fp ${counts[half][s]!.fn} fn`)
  console.log(`${half}: ${errors.filter((e) => e.half === half).length} errors (${bySignal.join(', ')})`)
}
if (values.errors) for (const e of errors) console.log(`${e.half} ${e.set} ${e.id} ${e.signal} ${e.kind}`)
