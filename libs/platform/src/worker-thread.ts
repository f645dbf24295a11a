import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'

/**
 * Starts a worker thread on `name`: the bundle's own script (dist/<name>.js, next to the bundle that
 * starts it, which infra/build.mjs builds as an entry point of its own), or, run from the sources
 * (tests, tsx), the TypeScript file `<name>.ts` beside `from` through tsx.
 *
 * `from` is the caller's `import.meta.url`: in the bundle that is the bundle's file, in the sources the
 * caller's module, so the worker's source must sit next to the module that starts it.
 */
export function startWorkerThread(name: string, from: string, workerData: unknown): Worker {
  const bundled = new URL(`./${name}.js`, from)
  if (existsSync(fileURLToPath(bundled))) return new Worker(bundled, { workerData })
  const source = new URL(`./${name}.ts`, from).href
  return new Worker(
    `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(source)}, ${JSON.stringify(source)}))`,
    { eval: true, workerData },
  )
}
