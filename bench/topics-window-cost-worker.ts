/**
 * One window clustering in a thread of its own, for bench/topics-many-domain-probe.ts --cost (helper
 * topics14): the thread reports its own CPU time (Linux's /proc/thread-self/stat, 10 ms ticks) around
 * windowClusters, while the parent samples the process's resident set. It waits for the vectors after it
 * has loaded, so the parent's baseline holds the thread's modules.
 */
import { readFileSync } from 'node:fs'
import { parentPort } from 'node:worker_threads'
import {
  WINDOW_CLUSTERING,
  type WindowClusterOptions,
  windowClusters,
} from '../services/analysis/src/topics/window-clusters.ts'

/** This thread's user + system CPU, in ms (fields 14 and 15 of its stat, after the command's parenthesis). */
function threadCpuMs(): number {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

parentPort!.once(
  'message',
  (job: { vectors: Float32Array; dimensions: number; options: Partial<WindowClusterOptions> }) => {
    const n = job.vectors.length / job.dimensions
    const vectors = Array.from({ length: n }, (_, i) =>
      job.vectors.subarray(i * job.dimensions, (i + 1) * job.dimensions),
    )
    const before = threadCpuMs()
    const numbers = windowClusters(vectors, [], { ...WINDOW_CLUSTERING, ...job.options })
    parentPort!.postMessage({ numbers, cpuMs: threadCpuMs() - before })
  },
)
parentPort!.postMessage('ready')
