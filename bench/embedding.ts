/**
 * The language model alone, in this thread, on the development sets' requests (quality/datasets.ts):
 * what it costs to embed each text alone, as the service does, beside batches of 32 sorted by length (as
 * it did until each text ran alone; the q8 model's vectors then depended on their batch).
 *
 *   npm run bench:embedding [-- --set clinc150|dstc11|both --limit N --rounds 3 --chunk 128]
 *
 * Ways, run in turn on each chunk of `--chunk` texts (a call gets a chunk; the machine is shared, so the
 * ways alternate finely and see the same load), `--rounds`
 * times over the set:
 * - `batched`: Transformers.js, 32 texts a call, sorted by length within the chunk, padded (the former
 *   embed);
 * - `alone, plain`: Transformers.js, a text a call (`tokenizer(text)`, `model(inputs)`);
 * - `service`: the service's own embed (embedding-model.ts).
 * Each prints texts/s and the process's CPU milliseconds per text (all its threads: onnxruntime runs in
 * this one, with one intra-op thread). Then checks that `service` gives the float32 bits of `alone, plain`
 * for every text, and how far `batched` is from them.
 */
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { AutoModel, AutoTokenizer, env, mean_pooling, type Tensor } from '@huggingface/transformers'
import { loadEmbeddingModel } from '../services/analysis/src/providers/embedding-model.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { loadSet, SET_NAMES, type SetName } from './quality/datasets.ts'
import { loadAverages } from './support/machine.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: {
    set: { type: 'string', default: 'both' },
    limit: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    chunk: { type: 'string', default: '128' },
    seed: { type: 'string', default: '1' },
    data: { type: 'string', default: path.join(ROOT, '../shared/data') },
  },
})
const setNames: SetName[] = values.set === 'both' ? [...SET_NAMES] : [values.set as SetName]

const service = await loadEmbeddingModel({
  modelDir: TEST_MODEL_DIR,
  cacheDir: TEST_MODEL_DIR,
  hubUrl: UNREACHABLE_HUB,
})
// loadEmbeddingModel has pointed Transformers.js at the folder.
env.allowRemoteModels = false
const tokenizer = await AutoTokenizer.from_pretrained('Xenova/all-MiniLM-L6-v2')
const model = await AutoModel.from_pretrained('Xenova/all-MiniLM-L6-v2', {
  dtype: 'q8',
  session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 },
})

const pooled = (state: Tensor, mask: Tensor) => mean_pooling(state, mask).normalize(2, -1)

async function batched(texts: readonly string[]): Promise<Float32Array[]> {
  const out = new Array<Float32Array>(texts.length)
  const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length)
  for (let start = 0; start < order.length; start += 32) {
    const indexes = order.slice(start, start + 32)
    const inputs = tokenizer(
      indexes.map((i) => texts[i]!.slice(0, 1_000)),
      { padding: true, truncation: true, max_length: 128 },
    )
    const { last_hidden_state } = await model(inputs)
    const data = pooled(last_hidden_state, inputs.attention_mask).data as Float32Array
    indexes.forEach((t, row) => {
      out[t] = data.slice(row * 384, (row + 1) * 384)
    })
  }
  return out
}

async function alonePlain(texts: readonly string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = []
  for (const text of texts) {
    const inputs = tokenizer(text.slice(0, 1_000), { truncation: true, max_length: 128 })
    const { last_hidden_state } = await model(inputs)
    out.push(pooled(last_hidden_state, inputs.attention_mask).data as Float32Array)
  }
  return out
}

const WAYS: [string, (texts: readonly string[]) => Promise<Float32Array[]>][] = [
  ['batched', batched],
  ['alone, plain', alonePlain],
  ['service', (texts) => service.embed(texts)],
]

console.log(`${new Date().toISOString()}, load average ${loadAverages()}, ` + `${service.version}`)
for (const name of setNames) {
  const set = loadSet(name, values.data, {
    seed: Number(values.seed),
    limit: values.limit ? Number(values.limit) : undefined,
  })
  // Trimmed as the service embeds a message; each distinct text once.
  const texts = [...new Set(set.requests.map((r) => r.text.trim()))]
  for (const [, way] of WAYS) await way(texts.slice(0, 64))
  console.log(`\n${name}: ${texts.length} distinct requests`)
  const results = new Map<string, Float32Array[]>()
  const figures = new Map<string, { rate: number[]; cpu: number[] }>()
  const chunk = Number(values.chunk)
  for (let round = 0; round < Number(values.rounds); round++) {
    const seconds = new Map<string, number>()
    const cpu = new Map<string, number>()
    // Chunk by chunk, the ways in turn (in the reverse order every other chunk): each sees the same load.
    for (let start = 0, n = 0; start < texts.length; start += chunk, n++) {
      const part = texts.slice(start, start + chunk)
      for (const [way, embed] of n % 2 === 0 ? WAYS : WAYS.toReversed()) {
        const cpuBefore = process.cpuUsage()
        const started = performance.now()
        const vectors = await embed(part)
        seconds.set(way, (seconds.get(way) ?? 0) + (performance.now() - started) / 1000)
        const used = process.cpuUsage(cpuBefore)
        cpu.set(way, (cpu.get(way) ?? 0) + (used.user + used.system) / 1000)
        results.set(way, start === 0 ? vectors : [...results.get(way)!, ...vectors])
      }
    }
    for (const [way] of WAYS) {
      const f = figures.get(way) ?? { rate: [], cpu: [] }
      f.rate.push(texts.length / seconds.get(way)!)
      f.cpu.push(cpu.get(way)! / texts.length)
      figures.set(way, f)
    }
    console.log(
      `  round ${round + 1}, load ${os.loadavg()[0]!.toFixed(2)}: ` +
        [...figures].map(([way, f]) => `${way} ${f.rate.at(-1)!.toFixed(0)}/s`).join(', '),
    )
  }
  console.log('  way             texts/s (rounds)          CPU ms/text (rounds)')
  for (const [way, f] of figures) {
    console.log(
      `  ${way.padEnd(15)} ${f.rate
        .map((r) => r.toFixed(0))
        .join(' / ')
        .padEnd(25)} ${f.cpu.map((c) => c.toFixed(3)).join(' / ')}`,
    )
  }
  const plain = results.get('alone, plain')!
  const same = (a: Float32Array, b: Float32Array) =>
    a.length === b.length && a.every((x, k) => Object.is(x, b[k]))
  const differing = results.get('service')!.filter((v, i) => !same(v, plain[i]!)).length
  console.log(`  service vs alone, plain: ${differing} of ${texts.length} vectors differ in any bit`)
  const cosines = results.get('batched')!.map((v, i) => v.reduce((s, x, k) => s + x * plain[i]![k]!, 0))
  console.log(
    `  batched vs alone: ${results.get('batched')!.filter((v, i) => !same(v, plain[i]!)).length} differ; ` +
      `cosine mean ${(cosines.reduce((s, c) => s + c, 0) / cosines.length).toFixed(4)}, min ${Math.min(...cosines).toFixed(4)}`,
  )
  if (differing > 0) process.exitCode = 1
}
