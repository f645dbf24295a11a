/**
 * The thread a re-clustering's clustering runs in (recluster-thread.ts starts one per run): the window's
 * silhouette-cut average linkage (agglomerative.ts), off the event loops of the process, at a lower
 * priority on Linux: re-clustering is background work.
 */
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { poolClusters } from './agglomerative.ts'

const { vectors, references, dimensions, nice } = workerData as {
  vectors: Float32Array
  references: Float32Array
  dimensions: number
  nice: number
}

try {
  if (nice > 0) setPriority(Number(readlinkSync('/proc/thread-self').split('/').at(-1)), nice)
} catch {
  // Not Linux, or not allowed: the thread keeps the process's priority.
}

const split = (flat: Float32Array) =>
  Array.from({ length: dimensions === 0 ? 0 : flat.length / dimensions }, (_, i) =>
    flat.subarray(i * dimensions, (i + 1) * dimensions),
  )
// The whole window at the silhouette's best cut, no cluster dissolved: the dissolving that suits a small
// pool (agglomerative.ts) sent half of a window of thousands to "other" (bench/FINDINGS.md, issue 31 item 2).
parentPort!.postMessage(poolClusters(split(vectors), split(references), { dissolve: false }))
