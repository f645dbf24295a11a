import type { Worker } from 'node:worker_threads'
import type { AllConfig } from '@cas/config'
import { type ConsumerStats, type EventConsumer, newConsumerStats, type PartitionLag } from '@cas/eventlog'
import { type Infrastructure, type ServiceModule, startWorkerThread } from '@cas/platform'
import type { Logger } from 'pino'
import { PARTITIONS_AT_ONCE, PROJECTOR_GROUP, projectionStage } from './app.ts'

/** What the projector's thread is given (structured-cloned into it). */
export interface ProjectorThreadData {
  /** The process's configuration; the thread connects to `databaseUrl` and opens nothing else of it. */
  readonly config: AllConfig
  /** The database the process opened (the embedded server's, when it started one). */
  readonly databaseUrl: string
  /** The logger's name and level; `false`: the projector logs nothing (tests). */
  readonly log: { readonly name: string; readonly level: string } | false
  /** The thread's connection pool (batches at once, the status reporter and the lag probe). */
  readonly poolSize: number
}

export type ProjectorThreadRequest = { readonly kind: 'lag'; readonly id: number } | { readonly kind: 'stop' }

export type ProjectorThreadReply =
  | { readonly kind: 'ready' }
  | { readonly kind: 'failed'; readonly reason: string }
  | { readonly kind: 'stats'; readonly stats: ConsumerStats }
  | { readonly kind: 'lag'; readonly id: number; readonly lag: PartitionLag[] }
  | { readonly kind: 'stopped' }

/** The projector run in a thread of its own; `consumer` is what the process's metrics read of it. */
export interface ProjectorThread {
  /**
   * Its `stats` are the counters as the thread last sent them (every second, and when it stops), added
   * to those of the threads before it; `lag()` is asked of the thread, empty while it is started again.
   */
  readonly consumer: Pick<EventConsumer, 'groupId' | 'stats' | 'lag'>
  /** How many times the thread was started again after it stopped without being asked to. */
  readonly restarts: number
  /** The running thread, if any (diagnostics and tests). */
  readonly worker: Worker | undefined
  /** Finishes and commits the batches in flight, leaves the group, closes the thread's connections. */
  stop(): Promise<void>
}

const COUNTERS = [
  'applied',
  'duplicates',
  'dropped',
  'batches',
  'errors',
  'deadLettered',
  'redriven',
  'restarts',
] as const

/** Adds the drops by reason of `more` to `into`, and returns it. */
function addDrops(into: Record<string, number>, more: Readonly<Record<string, number>>) {
  for (const [reason, n] of Object.entries(more)) into[reason] = (into[reason] ?? 0) + n
  return into
}

/** How long a thread that stopped unasked waits before it is started again. */
const RESTART_DELAY_MS = 1_000

/**
 * Runs the projector (startProjector: the consumer and its status reporter) in a worker thread: the
 * all-in-one's projector, so that projecting does not queue behind capture and dashboard requests on
 * one event loop, nor they behind it (the measurements: bench/FINDINGS.md, "From source comments"). The thread has its own connections to the process's database and
 * its own Kafka client; the read models, checkpoints and pipeline status it writes are what every other
 * part reads.
 *
 * Resolves once the consumer has started; rejects when it could not start (as `consumer.start()`
 * would). A thread that stops unasked afterwards (an uncaught error) is reported with `onError` and
 * started again after a second: the consumer's checkpoints make that a redelivery of what it had not
 * committed, never a loss or a double count.
 */
export async function startProjectorThread(
  data: ProjectorThreadData,
  onError: (msg: string, fields?: Record<string, unknown>) => void,
): Promise<ProjectorThread> {
  // The current thread's counters, and those of the threads before it: the process's counters only grow.
  let stats = newConsumerStats()
  const before = newConsumerStats()
  const carryOver = () => {
    for (const key of COUNTERS) before[key] += stats[key]
    addDrops(before.droppedEvents, stats.droppedEvents)
    before.lastAppliedOccurredAt = stats.lastAppliedOccurredAt ?? before.lastAppliedOccurredAt
    stats = newConsumerStats()
  }
  let worker: Worker | undefined
  let stopping = false
  let restarts = 0
  let restartTimer: NodeJS.Timeout | undefined
  let nextId = 0
  const lags = new Map<number, (lag: PartitionLag[]) => void>()
  let stopped: (() => void) | undefined

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const w = startWorkerThread('projector-worker', import.meta.url, data)
      worker = w
      let ready = false
      w.on('message', (reply: ProjectorThreadReply) => {
        switch (reply.kind) {
          case 'ready':
            ready = true
            resolve()
            break
          case 'failed':
            reject(new Error(`the projector could not start: ${reply.reason}`))
            break
          case 'stats':
            stats = reply.stats
            break
          case 'lag':
            lags.get(reply.id)?.(reply.lag)
            lags.delete(reply.id)
            break
          case 'stopped':
            stopped?.()
            break
        }
      })
      w.on('error', (err) => {
        if (ready) onError('the projector thread failed', { err })
        else reject(err)
      })
      w.on('exit', (code) => {
        if (worker === w) worker = undefined
        carryOver()
        for (const answer of lags.values()) answer([])
        lags.clear()
        stopped?.()
        if (!ready) reject(new Error(`the projector thread exited (${code}) before it started`))
        else if (!stopping) {
          restarts++
          onError('the projector thread stopped; starting it again', { code, restarts })
          restartLater()
        }
      })
    })
  // A thread started again that cannot start (the database down) is tried again, a second later each time.
  const restartLater = () => {
    restartTimer = setTimeout(() => {
      restartTimer = undefined
      if (stopping) return
      start().catch((err) => {
        onError('the projector thread did not start again', { err })
        if (!stopping) restartLater()
      })
    }, RESTART_DELAY_MS)
  }

  await start()
  return {
    consumer: {
      groupId: PROJECTOR_GROUP,
      get stats() {
        const total = {
          ...stats,
          droppedEvents: addDrops({ ...before.droppedEvents }, stats.droppedEvents),
          lastAppliedOccurredAt: stats.lastAppliedOccurredAt ?? before.lastAppliedOccurredAt,
        }
        for (const key of COUNTERS) total[key] += before[key]
        return total
      },
      lag() {
        const w = worker
        if (!w) return Promise.resolve([])
        const id = nextId++
        return new Promise((resolve) => {
          lags.set(id, resolve)
          w.postMessage({ kind: 'lag', id } satisfies ProjectorThreadRequest)
        })
      },
    },
    get restarts() {
      return restarts
    },
    get worker() {
      return worker
    },
    async stop() {
      stopping = true
      clearTimeout(restartTimer)
      const w = worker
      if (!w) return
      await new Promise<void>((resolve) => {
        stopped = resolve
        w.postMessage({ kind: 'stop' } satisfies ProjectorThreadRequest)
      })
      await w.terminate()
    },
  }
}

/**
 * The projector in a thread of its own (startProjectorThread) as the all-in-one composes it: the same
 * readiness and metrics as the projector's own process, the thread's counters behind them.
 */
export function projectorThreadService(
  config: AllConfig,
  infra: Pick<Infrastructure, 'pool' | 'databaseUrl'>,
  log: Logger | false,
  onError: (msg: string, fields?: Record<string, unknown>) => void,
): ServiceModule & { readonly thread: ProjectorThread | undefined } {
  let thread: ProjectorThread | undefined
  return {
    name: 'projector',
    get thread() {
      return thread
    },
    async start() {
      thread = await startProjectorThread(
        {
          config,
          databaseUrl: infra.databaseUrl,
          log: log && { name: String(log.bindings().name ?? 'all-in-one'), level: log.level },
          poolSize: PARTITIONS_AT_ONCE + 2,
        },
        onError,
      )
    },
    ...projectionStage(
      infra.pool,
      () => {
        if (!thread) throw new Error('the projector thread has not started')
        return thread.consumer
      },
      config.KAFKA_BROKERS !== undefined,
    ),
    close: async () => thread?.stop(),
  }
}
