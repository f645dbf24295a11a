/**
 * What tells a many-domain small window from a single-domain one when its domains each hold 8 requests or
 * more (issue 31, items 1 and 2; helper topics13). For every window of the bench:topics-small families
 * (topics-small.ts `samples`), UMAP once, then every min_cluster_size 8 … 3 at both min_samples, each run
 * split and its noise placed (topics-granularity.ts runsOf), and per window one JSON line (stdout):
 *
 * - `accDefault` / `accMany`: ACC against the intents of the window without the many-domain path (the
 *   runs at 8 and n / 50 compared before the split) and of the many-domain path (every run compared after
 *   the split), the clusterings alone (no placement); `accLanded` as windowClusters runs (the gate);
 * - `noise8`: HDBSCAN's noise at 8, the larger of the two min_samples (the gate until 2026-12-04);
 * - `meanCosine`: the window's mean pairwise cosine in the model's space (meanPairwiseCosine: the gate);
 * - `groupSimilarity`: its requests' mean similarity to their seventh nearest other (groupSimilarity: the
 *   gate's second reading);
 * - `silDefault`, `silMany`: their silhouettes in the model's space; `silGain` the many path's over it;
 * - `tightDefault`, `tightMany`: their clusters' mean within-cluster similarity, weighted by size;
 * - `split8`: the share of the window in clusters that splitLoose splits at 8 (the larger min_samples').
 *
 * - `gate`: whether the gate (meanCosine under manyDomainCosine, groupSimilarity under
 *   manyDomainGroupSimilarity) would send the window down the
 *   many-domain path were it sized for it; `accLanded` is windowClusters as landed (computed only where that differs
 *   from `accDefault`: a window sized for the path, manyDomainSized).
 *
 * `--cost` (helper topics14): each path also run in a thread of its own (topics-window-cost-worker.ts),
 * `default` (no many-domain path) and `many` (the path forced: every size compared after the split), with
 * the thread's CPU time and the process's peak resident set over the thread's loaded baseline (sampled
 * every 5 ms); `manyAgrees` checks the forced path's clusters equal the probe's `accMany` run.
 *
 *   npx tsx bench/topics-many-domain-probe.ts --family many --clinc-split train [--n 20,40,60]
 *     [--per-intent 4,8,12] [--seeds 3] [--cost] [--only-seed 1]
 */
import { parseArgs } from 'node:util'
import { startWorkerThread } from '@cas/platform'
import { labelPoints } from '../services/analysis/src/topics/hdbscan.ts'
import type { Vector } from '../services/analysis/src/topics/vectors.ts'
import {
  cosineSilhouette,
  groupSimilarity,
  manyDomainSized,
  manyDomainWindow,
  meanPairwiseCosine,
  nearestNeighbours,
  splitLoose,
  umapEmbedding,
  WINDOW_CLUSTERING,
  type WindowClusterOptions,
  windowClusters,
} from '../services/analysis/src/topics/window-clusters.ts'
import { clusteringAccuracy } from './quality/metrics.ts'
import { loadAverages } from './support/machine.ts'
import { runsOf } from './topics-granularity.ts'
import { samples } from './topics-small.ts'

/** Mean within-cluster cosine similarity of a clustering, each cluster weighted by its size. */
function tightness(numbers: readonly number[], vectors: readonly Vector[]): number {
  const sums = new Map<number, Float64Array>()
  const sizes = new Map<number, number>()
  numbers.forEach((c, i) => {
    let sum = sums.get(c)
    if (!sum) {
      sum = new Float64Array(vectors[i]!.length)
      sums.set(c, sum)
    }
    const v = vectors[i]!
    for (let k = 0; k < v.length; k++) sum[k]! += v[k]!
    sizes.set(c, (sizes.get(c) ?? 0) + 1)
  })
  let total = 0
  for (const [c, sum] of sums) {
    const size = sizes.get(c)!
    if (size < 2) continue
    let s = 0
    for (let k = 0; k < sum.length; k++) s += sum[k]! * sum[k]!
    total += (s - size) / (size - 1)
  }
  return total / numbers.length
}

/** One window clustered in a thread: its clusters, the thread's CPU and the peak resident set over its baseline. */
async function costOf(vectors: readonly Vector[], options: Partial<WindowClusterOptions>) {
  const dimensions = vectors[0]!.length
  const flat = new Float32Array(vectors.length * dimensions)
  vectors.forEach((v, i) => {
    flat.set(v, i * dimensions)
  })
  const worker = startWorkerThread('topics-window-cost-worker', import.meta.url, undefined)
  await new Promise((resolve) => worker.once('message', resolve))
  const baseline = process.memoryUsage.rss()
  let peak = baseline
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss())
  }, 5)
  const done = new Promise<{ numbers: number[]; cpuMs: number }>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  worker.postMessage({ vectors: flat, dimensions, options })
  const result = await done
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage.rss())
  await worker.terminate()
  return { ...result, peakMb: (peak - baseline) / 2 ** 20 }
}

/** Any window sized for the path: `gate` reads the two bars alone. */
const ANY_SIZE: Partial<WindowClusterOptions> = {
  manyDomainFrom: 0,
  manyDomainBelow: Number.POSITIVE_INFINITY,
}
/** The many-domain path forced at any size: no bar on either reading, no ceiling. */
const FORCED: Partial<WindowClusterOptions> = {
  ...ANY_SIZE,
  manyDomainCosine: Number.POSITIVE_INFINITY,
  manyDomainGroupSimilarity: Number.POSITIVE_INFINITY,
}
const NO_PATH: Partial<WindowClusterOptions> = { manyDomainCosine: Number.NEGATIVE_INFINITY }

const { values } = parseArgs({
  options: {
    family: { type: 'string', multiple: true },
    n: { type: 'string' },
    seeds: { type: 'string', default: '3' },
    'clinc-split': { type: 'string', default: 'val' },
    'per-intent': { type: 'string', default: '4,8,12' },
    cost: { type: 'boolean', default: false },
    'only-seed': { type: 'string' },
  },
})
const split = `clinc150-${values['clinc-split']}` as 'clinc150-val' | 'clinc150-test' | 'clinc150-train'
console.error(`load average ${loadAverages()}`)
const cpu = process.cpuUsage()
for (const family of values.family ?? ['many']) {
  const sizes = (values.n ?? (family === 'many' ? '20,40,60' : '100,200'))
    .split(',')
    .map((x) => (x === 'all' ? Number.POSITIVE_INFINITY : Number(x)))
  const all = await samples(
    family,
    sizes,
    Number(values.seeds),
    split,
    values['per-intent'].split(',').map(Number),
  )
  for (const sample of all) {
    if (values['only-seed'] && !sample.name.endsWith(`seed ${values['only-seed']}`)) continue
    const vectors = sample.requests.map((r) => r.embedding)
    const intents = sample.requests.map((r) => r.intent)
    const n = vectors.length
    if (n < 64) continue
    const acc = (numbers: readonly number[]) => clusteringAccuracy(intents, numbers.map(String))
    const knn = nearestNeighbours(vectors, WINDOW_CLUSTERING.neighbours)
    const umap = umapEmbedding(vectors, WINDOW_CLUSTERING, knn)
    const runs = runsOf(umap, vectors)
    const sils = runs.map((r) => cosineSilhouette(r.numbers, vectors))
    let best = 0
    for (let i = 1; i < runs.length; i++) if (sils[i]! > sils[best]!) best = i
    const many = runs[best]!.numbers
    const off = windowClusters(vectors, [], { ...WINDOW_CLUSTERING, ...NO_PATH })
    const landed = manyDomainSized(n, WINDOW_CLUSTERING) ? windowClusters(vectors) : off
    const eight = runs.filter((r) => r.minClusterSize === WINDOW_CLUSTERING.minClusterSize)
    const coarse = eight[eight.length - 1]!
    const splitIds = new Set(splitLoose(coarse.tree, coarse.selected, vectors))
    const before = labelPoints(coarse.tree, coarse.selected, n)
    const moved = before.filter((c) => c >= 0 && !splitIds.has(c)).length
    const silDefault = cosineSilhouette(off, vectors)
    const noise8 = Math.max(...eight.map((r) => r.noise))
    const meanCosine = meanPairwiseCosine(vectors)
    const groups = groupSimilarity(knn.distances, WINDOW_CLUSTERING)
    const cost = values.cost
      ? { default: await costOf(vectors, NO_PATH), many: await costOf(vectors, FORCED) }
      : undefined
    const same = (a: readonly number[], b: readonly number[]) => a.every((x, i) => x === b[i])
    console.log(
      JSON.stringify({
        family,
        split,
        name: sample.name,
        size: sample.size,
        n,
        intents: new Set(intents).size,
        accDefault: acc(off),
        accMany: acc(many),
        accLanded: acc(landed),
        topicsDefault: new Set(off).size,
        topicsMany: new Set(many).size,
        manyRun: `${runs[best]!.minClusterSize}/${runs[best]!.minSamples}`,
        noise8,
        meanCosine,
        groupSimilarity: groups,
        gate: manyDomainWindow(n, meanCosine, groups, { ...WINDOW_CLUSTERING, ...ANY_SIZE }),
        ...(cost
          ? {
              cpuDefaultMs: cost.default.cpuMs,
              cpuManyMs: cost.many.cpuMs,
              peakDefaultMb: cost.default.peakMb,
              peakManyMb: cost.many.peakMb,
              manyAgrees: same(cost.many.numbers, many) && same(cost.default.numbers, off),
            }
          : {}),
        silDefault,
        silMany: sils[best],
        silGain: sils[best]! - silDefault,
        tightDefault: tightness(off, vectors),
        tightMany: tightness(many, vectors),
        split8: moved / n,
        runs: runs.map(
          (r, i) => `${r.minClusterSize}/${r.minSamples}:${new Set(r.numbers).size}:${sils[i]!.toFixed(3)}`,
        ),
      }),
    )
  }
}
const used = process.cpuUsage(cpu)
console.error(`CPU ${((used.user + used.system) / 1e6).toFixed(0)} s; load average ${loadAverages()}`)
