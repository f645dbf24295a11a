import { nodeProcess, type ProcessLike } from './runtime.js'

/** What the exit hooks need of a client. */
export interface ExitFlushable {
  /** Sends what is queued; resolves when done. */
  flushOnExit(): Promise<void>
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const

const clients = new Set<ExitFlushable>()
let installed: { process: ProcessLike; listeners: Map<string, (...args: unknown[]) => void> } | undefined

/**
 * Flushes the registered clients when a Node.js process is about to exit: on `beforeExit` (the event loop
 * ran empty: the queued messages are sent, and the process exits once they are), and on SIGTERM and
 * SIGINT (the messages are sent, then the signal is raised again so the process ends as it would have,
 * unless the program listens to that signal itself: then ending is left to it). One set of listeners
 * for every client. Nothing happens where there is no Node.js-like `process` (browsers, edge runtimes).
 * `process.exit()` cannot be waited for: call `await client.shutdown()` before it.
 */
export function registerForExit(client: ExitFlushable): void {
  const proc = nodeProcess()
  if (!proc) return
  clients.add(client)
  if (installed) return
  const listeners = new Map<string, (...args: unknown[]) => void>()
  let flushing: Promise<void> | undefined
  const flushAll = () => {
    flushing ??= Promise.allSettled([...clients].map((c) => c.flushOnExit())).then(() => {
      flushing = undefined
    })
    return flushing
  }
  listeners.set('beforeExit', () => void flushAll())
  for (const signal of SIGNALS) {
    const listener = () => {
      void flushAll().then(() => {
        const ours = installed?.listeners.get(signal)
        if (ours) proc.off(signal, ours)
        installed?.listeners.delete(signal)
        if (proc.listenerCount(signal) === 0) proc.kill(proc.pid, signal)
      })
    }
    listeners.set(signal, listener)
  }
  for (const [event, listener] of listeners) proc.on(event, listener)
  installed = { process: proc, listeners }
}

/** Forgets a client (after its shutdown); the listeners go with the last one. */
export function unregisterForExit(client: ExitFlushable): void {
  clients.delete(client)
  if (clients.size > 0 || !installed) return
  for (const [event, listener] of installed.listeners) installed.process.off(event, listener)
  installed = undefined
}
