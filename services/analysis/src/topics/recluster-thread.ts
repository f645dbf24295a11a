import { startWorkerThread } from '@cas/platform'
import type { Vector } from './vectors.ts'

/**
 * The window's clusters (window-clusters.ts: UMAP + HDBSCAN, −1 for noise; a small window's by average
 * linkage against the `references`), computed in a thread of its own started for the run
 * (recluster-worker.ts): neither the HTTP event loop nor the analyzer's threads wait for it. Past
 * `timeoutMs` the thread is stopped and the run fails (its policy retries it).
 */
/**
 * The re-clustering thread's niceness on Linux: the lowest priority, below the analyzer threads'
 * (ANALYSIS_THREAD_NICE, 10). Re-clustering settles the topics after a burst; during one, the analysis
 * of the messages arriving goes first (at the same niceness the two shared the core evenly).
 */
export const RECLUSTER_NICE = 19

export function clusterInThread(
  vectors: readonly Vector[],
  references: readonly Vector[],
  options: { timeoutMs: number; nice?: number },
): Promise<number[]> {
  const dimensions = vectors[0]?.length ?? references[0]?.length ?? 0
  const flat = (list: readonly Vector[]) => {
    const out = new Float32Array(list.length * dimensions)
    for (const [i, v] of list.entries()) out.set(v, i * dimensions)
    return out
  }
  const worker = startWorkerThread('recluster-worker', import.meta.url, {
    vectors: flat(vectors),
    references: flat(references),
    dimensions,
    nice: options.nice ?? RECLUSTER_NICE,
  })
  return new Promise<number[]>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`re-clustering took longer than ${options.timeoutMs} ms`))
      void worker.terminate()
    }, options.timeoutMs)
    worker.once('message', (clusters: number[]) => {
      clearTimeout(timer)
      resolve(clusters)
      void worker.terminate()
    })
    worker.once('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    worker.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`re-clustering thread exited (${code})`))
    })
  })
}
