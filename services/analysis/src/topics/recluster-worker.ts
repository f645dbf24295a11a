/**
 * The thread a re-clustering's clustering runs in (recluster-thread.ts starts one per run): the window's
 * UMAP + HDBSCAN (window-clusters.ts; a small window's average linkage), off the event loops of the process, at a lower priority on Linux:
 * re-clustering is background work.
 */
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { windowClusters } from './window-clusters.ts'

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
parentPort!.postMessage(windowClusters(split(vectors), split(references)))
