/**
 * onnxruntime's session options against the service's (embedding-model.ts: the graph trimmed for lone texts,
 * `intraOpNumThreads: 1, interOpNumThreads: 1`, every other option onnxruntime's default), on a fixed sample of
 * the texts the model runs for DSTC11 and CLINC150: each end user's whole request and, where it has several,
 * each of its sentences (the signals' units), each text alone at its own length, as the service runs them
 * (bench/FINDINGS.md, perf12: 1.15 texts a DSTC11 end-user message, none padded).
 *
 *   npx tsx bench/session-options.ts [--per-set 300] [--rounds 8] [--chunk 20] [--only a,b] [--lengths]
 *
 * For every option: whether its outputs (the graph's float64 sums over the tokens, then the unit vector) are
 * the service's bit for bit on every text, and its CPU per token beside the service's settings. CPU is the
 * calling thread's (`/proc/thread-self/schedstat`, nanoseconds; onnxruntime-node runs a session in the
 * thread that calls it when it has one intra-op thread) and the whole process's (`process.cpuUsage`, which
 * counts the intra-op threads of the options that have them). The machine is shared: the options run in turn
 * on each chunk of texts, their order rotated chunk by chunk, and each chunk's CPU is divided by the
 * service's on the same chunk in the same round; the medians of those ratios are reported, with the load.
 * `--lengths` also times the service's settings on one text cut to 2–64 tokens, lengths in turn: what a run
 * costs whatever its length, and what each token adds.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { AutoTokenizer, env } from '@huggingface/transformers'
import { InferenceSession, Tensor } from 'onnxruntime-node'
import {
  EMBEDDING_MODEL_ID,
  loadEmbeddingModel,
  normalizedMean,
} from '../services/analysis/src/providers/embedding-model.ts'
import { leanGraphForLoneTexts, TOKEN_SUMS } from '../services/analysis/src/providers/model-graph.ts'
import { sentencesOf } from '../services/analysis/src/signals/cues.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { loadSet, SET_NAMES, type SetName } from './quality/datasets.ts'
import { loadAverages, machineInfo, machineLine } from './support/machine.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: {
    'per-set': { type: 'string', default: '300' },
    rounds: { type: 'string', default: '8' },
    chunk: { type: 'string', default: '20' },
    only: { type: 'string' },
    lengths: { type: 'boolean', default: false },
    data: { type: 'string', default: path.join(ROOT, '../shared/data') },
  },
})

const SERVICE = { intraOpNumThreads: 1, interOpNumThreads: 1 }
const scratch = mkdtempSync(path.join(os.tmpdir(), 'session-options-'))
const optimizedFile = path.join(scratch, 'optimized.onnx')

/** Each option as the service's settings plus it, on the trimmed graph or on `model`'s file. */
const OPTIONS: {
  name: string
  options: Record<string, unknown>
  model?: () => string
}[] = [
  { name: 'service (A)', options: {} },
  { name: 'graphOptimizationLevel all', options: { graphOptimizationLevel: 'all' } },
  { name: 'graphOptimizationLevel extended', options: { graphOptimizationLevel: 'extended' } },
  { name: 'graphOptimizationLevel basic', options: { graphOptimizationLevel: 'basic' } },
  { name: 'graphOptimizationLevel disabled', options: { graphOptimizationLevel: 'disabled' } },
  { name: 'enableCpuMemArena false', options: { enableCpuMemArena: false } },
  { name: 'enableMemPattern false', options: { enableMemPattern: false } },
  {
    name: 'arena and pattern false',
    options: { enableCpuMemArena: false, enableMemPattern: false },
  },
  { name: 'executionMode parallel', options: { executionMode: 'parallel' } },
  {
    name: 'parallel, interOp 2',
    options: { executionMode: 'parallel', interOpNumThreads: 2 },
  },
  { name: 'intraOpNumThreads 2', options: { intraOpNumThreads: 2 } },
  {
    name: 'intraOp 2, no spinning',
    options: { intraOpNumThreads: 2, extra: { session: { intra_op: { allow_spinning: '0' } } } },
  },
  {
    name: 'denormals as zero',
    options: { extra: { session: { set_denormal_as_zero: '1' } } },
  },
  {
    name: 'saved optimized, loaded disabled',
    options: { graphOptimizationLevel: 'disabled' },
    model: () => optimizedFile,
  },
  {
    name: 'saved optimized, loaded all',
    options: {},
    model: () => optimizedFile,
  },
  // The service's settings again, in the session created last: how much of a difference the order of
  // creation (where a session's memory lands) makes by itself.
  { name: 'service settings, created last (A/A)', options: {} },
]
const only = values.only?.split(',')
const chosen = OPTIONS.filter((o, i) => i === 0 || !only || only.some((n) => o.name.includes(n)))

const modelFile = path.join(TEST_MODEL_DIR, EMBEDDING_MODEL_ID, 'onnx/model_quantized.onnx')
const published = readFileSync(modelFile)
const edited = leanGraphForLoneTexts(
  new Uint8Array(published.buffer, published.byteOffset, published.byteLength),
)
if (!edited) throw new Error(`${modelFile} is not the graph model-graph.ts trims`)

// The optimized graph saved once, by a session with the service's settings (optimization level 'all').
await (
  await InferenceSession.create(edited.bytes, { ...SERVICE, optimizedModelFilePath: optimizedFile })
).release()

const sessions = new Map<string, InferenceSession>()
for (const o of chosen) {
  const options = { ...SERVICE, ...o.options }
  sessions.set(
    o.name,
    o.model
      ? await InferenceSession.create(o.model(), options)
      : await InferenceSession.create(edited.bytes, options),
  )
}

env.allowLocalModels = true
env.localModelPath = `${TEST_MODEL_DIR}/`
env.allowRemoteModels = false
const tokenizer = await AutoTokenizer.from_pretrained(EMBEDDING_MODEL_ID)
const idsOf = (text: string) =>
  (
    tokenizer(text.slice(0, 1_000), {
      truncation: true,
      max_length: 128,
      return_tensor: false,
    }) as unknown as { input_ids: number[] }
  ).input_ids

interface Text {
  readonly set: SetName
  readonly text: string
  readonly ids: BigInt64Array
}

/** The first texts the model runs for a set's end-user requests (its whole message, then its sentences). */
function sampleOf(set: SetName, count: number): Text[] {
  const out: Text[] = []
  const seen = new Set<string>()
  for (const request of loadSet(set, values.data, { seed: 1 }).requests) {
    const whole = request.text.trim()
    const sentences = sentencesOf(whole)
    for (const text of sentences.length > 1 ? [whole, ...sentences] : [whole]) {
      if (seen.has(text) || out.length >= count) continue
      seen.add(text)
      out.push({ set, text, ids: BigInt64Array.from(idsOf(text), (id) => BigInt(id)) })
    }
  }
  return out
}

const texts = SET_NAMES.flatMap((set) => sampleOf(set, Number(values['per-set'])))
const ONES = new BigInt64Array(128).fill(1n)
const ZEROS = new BigInt64Array(128)

/** One text through a session as embedAlone runs it: a batch of one, at its own length. */
async function sumsOf(session: InferenceSession, ids: BigInt64Array): Promise<Float64Array> {
  const dims = [1, ids.length]
  const out = await session.run(
    {
      input_ids: new Tensor('int64', ids, dims),
      attention_mask: new Tensor('int64', ONES.subarray(0, ids.length), dims),
      token_type_ids: new Tensor('int64', ZEROS.subarray(0, ids.length), dims),
    },
    [TOKEN_SUMS],
  )
  return out[TOKEN_SUMS]!.data as Float64Array
}

const threadNs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0])
const bytesEqual = (a: ArrayBufferView, b: ArrayBufferView) =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
const median = (xs: number[]) => {
  const s = xs.toSorted((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

// No padding: every text runs at its own length, and none holds the pad token (id 0).
const padded = texts.filter((t) => t.ids.includes(0n)).length
console.log(machineLine(await machineInfo()))
for (const set of SET_NAMES) {
  const mine = texts.filter((t) => t.set === set)
  const tokens = mine.reduce((n, t) => n + t.ids.length, 0)
  console.log(
    `${set}: ${mine.length} texts, ${(tokens / mine.length).toFixed(1)} tokens each ` +
      `(${Math.min(...mine.map((t) => t.ids.length))}–${Math.max(...mine.map((t) => t.ids.length))}), batch 1`,
  )
}
console.log(`texts holding the pad token: ${padded}\n`)

// Identity: every option's sums and vectors against the service's, bit for bit, on every text.
const reference = new Map<Text, Float64Array>()
for (const t of texts) reference.set(t, await sumsOf(sessions.get(chosen[0]!.name)!, t.ids))
// The harness is the service: its embed gives the reference's vectors, bit for bit.
const service = await loadEmbeddingModel({
  modelDir: TEST_MODEL_DIR,
  cacheDir: TEST_MODEL_DIR,
  hubUrl: UNREACHABLE_HUB,
})
const served = await service.embed(texts.map((t) => t.text))
const notServed = texts.filter(
  (t, i) => !bytesEqual(served[i]!, normalizedMean(reference.get(t)!, t.ids.length)),
).length
console.log(
  `the service's embed against this harness's session A: ${notServed} of ${texts.length} vectors differ`,
)
const identity = new Map<string, { sums: number; vectors: number; maxDiff: number }>()
for (const o of chosen) {
  let sums = 0
  let vectors = 0
  let maxDiff = 0
  for (const t of texts) {
    const a = reference.get(t)!
    const b = await sumsOf(sessions.get(o.name)!, t.ids)
    if (!bytesEqual(a, b)) sums++
    const va = normalizedMean(a, t.ids.length)
    const vb = normalizedMean(b, t.ids.length)
    if (!bytesEqual(va, vb)) {
      vectors++
      for (let k = 0; k < va.length; k++) maxDiff = Math.max(maxDiff, Math.abs(va[k]! - vb[k]!))
    }
  }
  identity.set(o.name, { sums, vectors, maxDiff })
}

// CPU: chunk by chunk, the options in turn, the order rotated each chunk.
const chunk = Number(values.chunk)
const ratios = new Map<string, { thread: number[]; process: number[]; wall: number[] }>()
const perToken = new Map<string, { thread: number[]; process: number[] }>()
const loads: number[] = []
for (let round = 0; round < Number(values.rounds); round++) {
  for (let start = 0, n = 0; start < texts.length; start += chunk, n++) {
    const part = texts.slice(start, start + chunk)
    const tokens = part.reduce((sum, t) => sum + t.ids.length, 0)
    const shift = (round * 7 + n) % chosen.length
    const order = [...chosen.slice(shift), ...chosen.slice(0, shift)]
    const measured = new Map<string, { thread: number; process: number; wall: number }>()
    for (const o of order) {
      const session = sessions.get(o.name)!
      const cpu = process.cpuUsage()
      const wall = performance.now()
      const thread = threadNs()
      for (const t of part) await sumsOf(session, t.ids)
      const threadUsed = threadNs() - thread
      const used = process.cpuUsage(cpu)
      measured.set(o.name, {
        thread: threadUsed / 1000 / tokens,
        process: (used.user + used.system) / tokens,
        wall: ((performance.now() - wall) * 1000) / tokens,
      })
    }
    const a = measured.get(chosen[0]!.name)!
    for (const [name, m] of measured) {
      const r = ratios.get(name) ?? { thread: [], process: [], wall: [] }
      r.thread.push(m.thread / a.thread)
      r.process.push(m.process / a.process)
      r.wall.push(m.wall / a.wall)
      ratios.set(name, r)
      const p = perToken.get(name) ?? { thread: [], process: [] }
      p.thread.push(m.thread)
      p.process.push(m.process)
      perToken.set(name, p)
    }
  }
  loads.push(os.loadavg()[0]!)
  console.log(`round ${round + 1} of ${values.rounds}, load ${loadAverages()}`)
}

console.log(
  `\n${Number(values.rounds) * Math.ceil(texts.length / chunk)} chunks of ${chunk} texts per option; ` +
    `load average (1 min) at the rounds' ends ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}\n`,
)
console.log(
  '| option | thread CPU µs/token (median) | × service, thread (median of paired chunks) | × service, process CPU | × service, wall | sums differing | vectors differing (max abs diff) |',
)
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const o of chosen) {
  const r = ratios.get(o.name)!
  const p = perToken.get(o.name)!
  const id = identity.get(o.name)!
  console.log(
    `| ${o.name} | ${median(p.thread).toFixed(2)} | ${median(r.thread).toFixed(3)} | ${median(r.process).toFixed(3)} | ` +
      `${median(r.wall).toFixed(3)} | ${id.sums} of ${texts.length} | ${id.vectors}${id.vectors ? ` (${id.maxDiff.toExponential(1)})` : ''} |`,
  )
}
if (values.lengths) {
  // One long DSTC11 request cut to each length (its [CLS] and first tokens, then [SEP]).
  const longest = texts.filter((t) => t.set === 'dstc11').toSorted((a, b) => b.ids.length - a.ids.length)[0]!
  const LENGTHS = [2, 4, 8, 12, 16, 20, 24, 32, 48, 64].filter((n) => n <= longest.ids.length)
  const cut = (n: number) => BigInt64Array.from([...longest.ids.subarray(0, n - 1), longest.ids.at(-1)!])
  const runs = new Map<number, number[]>()
  const service = sessions.get(chosen[0]!.name)!
  for (let round = 0; round < 2 * Number(values.rounds); round++) {
    for (const n of round % 2 ? LENGTHS.toReversed() : LENGTHS) {
      const ids = cut(n)
      const thread = threadNs()
      for (let i = 0; i < 10; i++) await sumsOf(service, ids)
      runs.set(n, [...(runs.get(n) ?? []), (threadNs() - thread) / 1000 / 10])
    }
  }
  const medians = LENGTHS.map((n) => [n, median(runs.get(n)!)] as const)
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
  const mx = mean(medians.map(([n]) => n))
  const my = mean(medians.map(([, us]) => us))
  const slope =
    medians.reduce((s, [n, us]) => s + (n - mx) * (us - my), 0) /
    medians.reduce((s, [n]) => s + (n - mx) ** 2, 0)
  console.log(`\nthe service's settings by length (thread CPU µs a run, median; load ${loadAverages()}):`)
  console.log(medians.map(([n, us]) => `${n} tokens ${us.toFixed(0)}`).join(', '))
  console.log(`least squares: ${(my - slope * mx).toFixed(0)} µs a run + ${slope.toFixed(1)} µs a token`)
}
for (const session of sessions.values()) await session.release()
rmSync(scratch, { recursive: true, force: true })
