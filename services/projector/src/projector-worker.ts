/**
 * The projector's worker thread (thread.ts): opens its own connections to the process's database (and
 * Kafka), runs the projector's consumer and status reporter, sends its counters every second, answers lag
 * requests, and on `stop` finishes its batches, closes everything and says so.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { type Infrastructure, logOutput, openInfrastructure } from '@cas/platform'
import { pino } from 'pino'
import { type Projector, startProjector } from './app.ts'
import type { ProjectorThreadData, ProjectorThreadReply, ProjectorThreadRequest } from './thread.ts'

const port = parentPort!
const data = workerData as ProjectorThreadData
const post = (reply: ProjectorThreadReply) => port.postMessage(reply)

const log = data.log
  ? pino({ name: data.log.name, level: data.log.level }, logOutput()).child({ thread: 'projector' })
  : false
let infra: Infrastructure | undefined
let projector: Projector | undefined
try {
  infra = await openInfrastructure(
    { ...data.config, DATABASE_URL: data.databaseUrl, DATABASE_POOL_SIZE: data.poolSize },
    log || pino({ level: 'silent' }),
    'all-in-one-projector',
    { attached: true },
  )
  projector = await startProjector(infra, log)
  post({ kind: 'ready' })
} catch (err) {
  await infra?.close()
  post({ kind: 'failed', reason: (err as Error).message })
  port.close()
}

if (projector) {
  const running = projector
  const sendStats = () => post({ kind: 'stats', stats: running.consumer.stats })
  const timer = setInterval(sendStats, 1_000)
  port.on('message', async (request: ProjectorThreadRequest) => {
    if (request.kind === 'lag') {
      const lag = await running.consumer.lag().catch(() => [])
      post({ kind: 'lag', id: request.id, lag })
      return
    }
    clearInterval(timer)
    await running.status.stop()
    await running.consumer.stop()
    await infra?.close()
    sendStats()
    post({ kind: 'stopped' })
    port.close()
  })
}
