/**
 * A batch-independent graph of the service's q8 model (issue 31, speed; bench/FINDINGS.md, perf14): each
 * matrix product's activations quantized per sequence over its real tokens (bench/batched-graph-rewrite.py)
 * instead of once over the whole batch, padding included. Does a text's vector from batches of the new graph
 * equal the service's (the published graph, the text alone), and what does a text cost batched against
 * alone?
 *
 *   python3 -m venv .cache/onnx-venv && .cache/onnx-venv/bin/pip install onnx numpy   (once)
 *   npx tsx bench/batched-graph.ts [--per-set 300] [--rounds 4] [--chunk 64] [--sizes 8,16] [--level disabled]
 *
 * Steps: onnxruntime-node optimizes the published graph at level 'all' (the service's level) and saves it;
 * the Python script rewrites that graph's quantized products; the result runs at level 'disabled' (nothing
 * re-fused). Both files stay under .cache/batched-graph (never committed). Texts: the first `--per-set`
 * distinct requests of DSTC11 and of CLINC150's test split, shuffled together (seed 1) so that every batch
 * mixes lengths and pads. Exactness: each text's unit vector from batches of each size, against the
 * service's embed (loadEmbeddingModel: the trimmed graph, each text alone), bit for bit, max abs difference,
 * min cosine; the published graph batched the same way beside it (the former way). CPU: chunks of `--chunk`
 * texts, each way in turn on the same chunk (order rotated chunk by chunk), the calling thread's CPU
 * (`/proc/thread-self/schedstat`; one intra-op thread runs in it) and the process's, each chunk's divided
 * by the service's on the same chunk; medians of the ratios. The machine may be shared: ratios only.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { AutoTokenizer, env } from '@huggingface/transformers'
import { InferenceSession, Tensor } from 'onnxruntime-node'
import {
  EMBEDDING_MODEL_ID,
  loadEmbeddingModel,
  meanPooledNormalized,
} from '../services/analysis/src/providers/embedding-model.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { seededShuffle } from './support/random.ts'
import { clincRequests, dstc11Requests } from './support/texts.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: {
    'per-set': { type: 'string', default: '300' },
    rounds: { type: 'string', default: '4' },
    chunk: { type: 'string', default: '64' },
    sizes: { type: 'string', default: '8,16' },
    level: { type: 'string', default: 'disabled' },
    python: { type: 'string', default: path.join(ROOT, '.cache/onnx-venv/bin/python') },
  },
})
const SIZES = values.sizes.split(',').map(Number)
const SERVICE = { intraOpNumThreads: 1, interOpNumThreads: 1 }
const MAX_TOKENS = 128
const MAX_CHARS = 1_000

// The graphs: published → optimized by onnxruntime at 'all' → rewritten per row.
const cache = path.join(ROOT, '.cache/batched-graph')
mkdirSync(cache, { recursive: true })
const publishedFile = path.join(TEST_MODEL_DIR, EMBEDDING_MODEL_ID, 'onnx/model_quantized.onnx')
const optimizedFile = path.join(cache, 'published-optimized.onnx')
const batchedFile = path.join(cache, 'per-row.onnx')
await (
  await InferenceSession.create(publishedFile, { ...SERVICE, optimizedModelFilePath: optimizedFile })
).release()
const rewrite = spawnSync(
  values.python,
  [path.join(ROOT, 'bench/batched-graph-rewrite.py'), optimizedFile, batchedFile],
  { encoding: 'utf8' },
)
if (rewrite.status !== 0 || !existsSync(batchedFile)) {
  throw new Error(
    `the rewrite failed (${values.python}; see this file's header for the venv): ${rewrite.stderr || rewrite.error}`,
  )
}
console.log(rewrite.stdout.trim())

const perRow = await InferenceSession.create(readFileSync(batchedFile), {
  ...SERVICE,
  graphOptimizationLevel: values.level as 'disabled' | 'basic' | 'extended' | 'all',
})
const published = await InferenceSession.create(publishedFile, SERVICE)
const service = await loadEmbeddingModel({
  modelDir: TEST_MODEL_DIR,
  cacheDir: TEST_MODEL_DIR,
  hubUrl: UNREACHABLE_HUB,
})

env.allowLocalModels = true
env.localModelPath = `${TEST_MODEL_DIR}/`
env.allowRemoteModels = false
const tokenizer = await AutoTokenizer.from_pretrained(EMBEDDING_MODEL_ID)
/** The token ids embedAlone gives the model for a text. */
const idsOf = (text: string) =>
  (
    tokenizer(text.slice(0, MAX_CHARS), {
      truncation: true,
      max_length: MAX_TOKENS,
      return_tensor: false,
    }) as unknown as { input_ids: number[] }
  ).input_ids

interface Sample {
  readonly set: 'dstc11' | 'clinc150'
  readonly text: string
}
const perSet = Number(values['per-set'])
const firstDistinct = (texts: readonly string[]) => [...new Set(texts.map((t) => t.trim()))].slice(0, perSet)
const samples: Sample[] = seededShuffle(
  [
    ...firstDistinct(dstc11Requests().map((t) => t.text)).map((text) => ({ set: 'dstc11' as const, text })),
    ...firstDistinct(clincRequests('test').map((t) => t.text)).map((text) => ({
      set: 'clinc150' as const,
      text,
    })),
  ],
  1,
)

/**
 * Texts through `session` `size` at a time, each batch padded to its longest (pad id 0, mask 0); `sorted`:
 * batched in the order of their token counts (less padding), the vectors returned in the texts' order.
 */
async function batched(
  session: InferenceSession,
  texts: readonly string[],
  size: number,
  sorted = false,
): Promise<Float32Array[]> {
  const all = texts.map(idsOf)
  const order = all.map((_, i) => i)
  if (sorted) order.sort((a, b) => all[a]!.length - all[b]!.length)
  const out = new Array<Float32Array>(texts.length)
  for (let start = 0; start < texts.length; start += size) {
    const rows = order.slice(start, start + size)
    const ids = rows.map((i) => all[i]!)
    const width = Math.max(...ids.map((x) => x.length))
    const input = new BigInt64Array(ids.length * width)
    const mask = new BigInt64Array(ids.length * width)
    ids.forEach((row, i) => {
      row.forEach((id, j) => {
        input[i * width + j] = BigInt(id)
        mask[i * width + j] = 1n
      })
    })
    const dims = [ids.length, width]
    const result = await session.run({
      input_ids: new Tensor('int64', input, dims),
      attention_mask: new Tensor('int64', mask, dims),
      token_type_ids: new Tensor('int64', new BigInt64Array(ids.length * width), dims),
    })
    const states = result.last_hidden_state!
    const pooled = meanPooledNormalized(
      { data: states.data as Float32Array, dims: states.dims },
      { data: mask, dims },
    )
    pooled.forEach((v, i) => {
      out[rows[i]!] = v
    })
  }
  return out
}

const bytesEqual = (a: Float32Array, b: Float32Array) =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, k) => s + x * b[k]!, 0)
const cosine = (a: Float32Array, b: Float32Array) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b))
const median = (xs: number[]) => {
  const s = xs.toSorted((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
const threadNs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0])

console.log(
  `${new Date().toISOString()}, load average ${load()}, ${os.cpus()[0]?.model}, ${os.cpus().length} cores`,
)
for (const set of ['dstc11', 'clinc150'] as const) {
  const lengths = samples.filter((s) => s.set === set).map((s) => idsOf(s.text).length)
  console.log(
    `${set}: ${lengths.length} texts, ${(lengths.reduce((a, b) => a + b, 0) / lengths.length).toFixed(1)} tokens ` +
      `each (${Math.min(...lengths)}–${Math.max(...lengths)})`,
  )
}
for (const size of SIZES) {
  let padding = 0
  let tokens = 0
  for (let start = 0; start < samples.length; start += size) {
    const lengths = samples.slice(start, start + size).map((s) => idsOf(s.text).length)
    tokens += lengths.reduce((a, b) => a + b, 0)
    padding += Math.max(...lengths) * lengths.length - lengths.reduce((a, b) => a + b, 0)
  }
  console.log(
    `batches of ${size}: ${((100 * padding) / (padding + tokens)).toFixed(0)} % of their positions padding`,
  )
  if (size > 1) {
    // By length within each chunk of the CPU's runs.
    let sortedPadding = 0
    const chunkSize = Number(values.chunk)
    for (let c = 0; c < samples.length; c += chunkSize) {
      const lengths = samples
        .slice(c, c + chunkSize)
        .map((s) => idsOf(s.text).length)
        .sort((a, b) => a - b)
      for (let start = 0; start < lengths.length; start += size) {
        const part = lengths.slice(start, start + size)
        sortedPadding += Math.max(...part) * part.length - part.reduce((a, b) => a + b, 0)
      }
    }
    console.log(
      `batches of ${size} by length within chunks of ${chunkSize}: ${((100 * sortedPadding) / (sortedPadding + tokens)).toFixed(0)} % padding`,
    )
  }
}

// Exactness: every text's vector from each way against the service's, per set.
const texts = samples.map((s) => s.text)
const reference = await service.embed(texts)
console.log(
  '\n| graph | batch | set | texts | bit-identical | max abs difference | min cosine | mean cosine |',
)
console.log('| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |')
for (const [name, session] of [
  ['per-row (new)', perRow],
  ['published', published],
] as const) {
  for (const [size, sorted] of SIZES.flatMap((n) => [[n, false] as const, [n, true] as const])) {
    const vectors = await batched(session, texts, size, sorted)
    for (const set of ['dstc11', 'clinc150'] as const) {
      const mine = samples.flatMap((s, i) => (s.set === set ? [i] : []))
      let same = 0
      let maxDiff = 0
      let minCos = 1
      let sumCos = 0
      for (const i of mine) {
        const a = reference[i]!
        const b = vectors[i]!
        if (bytesEqual(a, b)) same++
        for (let k = 0; k < a.length; k++) maxDiff = Math.max(maxDiff, Math.abs(a[k]! - b[k]!))
        const cos = cosine(a, b)
        minCos = Math.min(minCos, cos)
        sumCos += cos
      }
      console.log(
        `| ${name} | ${size}${sorted ? ', by length' : ''} | ${set} | ${mine.length} | ${same} | ${maxDiff.toExponential(2)} | ` +
          `${minCos.toFixed(7)} | ${(sumCos / mine.length).toFixed(7)} |`,
      )
    }
  }
}

// CPU: the ways in turn on each chunk, the order rotated chunk by chunk; ratios to alone on the same chunk.
type Way = { name: string; run: (texts: readonly string[]) => Promise<unknown> }
const ways: Way[] = [
  { name: 'alone, the service (trimmed graph)', run: (t) => service.embed(t) },
  { name: 'per-row graph, each text alone', run: (t) => batched(perRow, t, 1) },
  ...SIZES.flatMap((size) => [
    { name: `per-row graph, batches of ${size}`, run: (t: readonly string[]) => batched(perRow, t, size) },
    {
      name: `per-row graph, batches of ${size} by length`,
      run: (t: readonly string[]) => batched(perRow, t, size, true),
    },
    {
      name: `published graph, batches of ${size} by length (not exact)`,
      run: (t: readonly string[]) => batched(published, t, size, true),
    },
  ]),
]
const chunk = Number(values.chunk)
const per = new Map<string, { thread: number[]; process: number[]; wall: number[]; threadUs: number[] }>()
const loads: number[] = []
let chunks = 0
for (let round = 0; round < Number(values.rounds); round++) {
  for (let start = 0, n = 0; start < samples.length; start += chunk, n++) {
    const part = texts.slice(start, start + chunk)
    const shift = (round * 3 + n) % ways.length
    const measured = new Map<string, { thread: number; process: number; wall: number }>()
    for (const way of [...ways.slice(shift), ...ways.slice(0, shift)]) {
      const cpu = process.cpuUsage()
      const wall = performance.now()
      const thread = threadNs()
      await way.run(part)
      const threadUs = (threadNs() - thread) / 1000 / part.length
      const used = process.cpuUsage(cpu)
      measured.set(way.name, {
        thread: threadUs,
        process: (used.user + used.system) / part.length,
        wall: ((performance.now() - wall) * 1000) / part.length,
      })
    }
    const alone = measured.get(ways[0]!.name)!
    for (const [name, m] of measured) {
      const r = per.get(name) ?? { thread: [], process: [], wall: [], threadUs: [] }
      r.thread.push(m.thread / alone.thread)
      r.process.push(m.process / alone.process)
      r.wall.push(m.wall / alone.wall)
      r.threadUs.push(m.thread)
      per.set(name, r)
    }
    chunks++
  }
  loads.push(os.loadavg()[0]!)
  console.log(`round ${round + 1} of ${values.rounds}, load ${load()}`)
}
console.log(
  `\n${chunks} chunks of ${chunk} texts per way; load average (1 min) at the rounds' ends ` +
    `${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}\n`,
)
console.log('| way | thread CPU µs a text (median) | × alone, thread | × alone, process | × alone, wall |')
console.log('| --- | ---: | ---: | ---: | ---: |')
for (const way of ways) {
  const r = per.get(way.name)!
  console.log(
    `| ${way.name} | ${median(r.threadUs).toFixed(0)} | ${median(r.thread).toFixed(3)} | ` +
      `${median(r.process).toFixed(3)} | ${median(r.wall).toFixed(3)} |`,
  )
}
await perRow.release()
await published.release()
