import { useCallback, useEffect, useRef, useState } from 'react'

export interface Polled<T> {
  /** The latest answer (kept while a later poll runs or fails). */
  readonly data: T | undefined
  /** The latest failure, cleared by the next success. */
  readonly error: unknown
  /** True until the first answer for the current inputs arrives. */
  readonly loading: boolean
  /** Loads again now (after a change the user made). */
  refresh(): void
}

/**
 * Loads with `load` when `key` (a string naming its inputs) changes, then again every `intervalMs` (when given) while the tab is
 * visible, and at once when it becomes visible again: how new conversations and analysis results
 * appear without a reload. A poll starts only after the previous one finished; stale answers are dropped.
 */
export function usePolled<T>(
  load: (signal: AbortSignal) => Promise<T>,
  key: string,
  intervalMs?: number,
): Polled<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true })
  const [tick, setTick] = useState(0)
  const loadRef = useRef(load)
  loadRef.current = load
  const loadedKey = useRef(key)

  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` names load's inputs; `tick` forces a reload.
  useEffect(() => {
    if (loadedKey.current !== key) {
      // New inputs: what was shown for the old ones must not pass for the answer to the new ones.
      loadedKey.current = key
      setState({ loading: true })
    }
    const controller = new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    let running = false
    const run = async () => {
      if (running) return
      running = true
      clearTimeout(timer)
      try {
        const data = await loadRef.current(controller.signal)
        if (!controller.signal.aborted) setState({ data, loading: false })
      } catch (error) {
        if (!controller.signal.aborted) setState((s) => ({ data: s.data, error, loading: false }))
      } finally {
        running = false
        if (!controller.signal.aborted && intervalMs && document.visibilityState === 'visible') {
          timer = setTimeout(run, intervalMs)
        }
      }
    }
    const onVisible = () => {
      if (document.visibilityState === 'visible') void run()
    }
    void run()
    document.addEventListener('visibilitychange', onVisible)
    return () => {
      controller.abort()
      clearTimeout(timer)
      document.removeEventListener('visibilitychange', onVisible)
    }
  }, [key, tick, intervalMs])

  const refresh = useCallback(() => setTick((t) => t + 1), [])
  return { data: state.data, error: state.error, loading: state.loading, refresh }
}
