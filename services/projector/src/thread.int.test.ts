import { loadConfig } from '@cas/config'
import { EMBEDDED_EVENT_LOG } from '@cas/eventlog'
import { afterEach, describe, expect, it } from 'vitest'
import { createChatbot, postCapture } from '../../../test/support/chatbots.ts'
import { useSignedInGateway } from '../../../test/support/gateway.ts'
import { TEST_MASTER_KEY } from '../../../test/support/keyring.ts'
import { projectorCaughtUp } from '../../../test/support/projector.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { type ProjectorThread, startProjectorThread } from './thread.ts'

const gateway = useSignedInGateway()

describe('the projector in a worker thread (the all-in-one)', () => {
  let thread: ProjectorThread | undefined
  const errors: string[] = []
  afterEach(async () => {
    await thread?.stop()
    thread = undefined
    errors.length = 0
  })

  const start = () =>
    startProjectorThread(
      {
        config: loadConfig({ DATABASE_URL: gateway.db.url, ENCRYPTION_MASTER_KEY: TEST_MASTER_KEY }),
        databaseUrl: gateway.db.url,
        log: false,
        poolSize: 6,
      },
      (msg) => errors.push(msg),
    )

  async function captureOne(apiKey: string, conversationId: string) {
    const res = await postCapture(gateway.app, apiKey, {
      conversationId,
      messages: [{ id: `${conversationId}-m1`, role: 'user', content: 'Where is my parcel?' }],
    })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().conversationId as string
  }

  const projected = async (id: string) =>
    (await gateway.db.pool.query('SELECT 1 FROM rm_messages WHERE conversation_id = $1', [id])).rowCount === 1

  it('projects what is captured, and reports its counters and lag to the thread that started it', async () => {
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    thread = await start()
    const id = await captureOne(apiKey, 'thread-1')
    await waitFor(() => projected(id), { what: 'the capture in the read models' })
    await waitFor(() => projectorCaughtUp(gateway.db.pool), { what: 'the projector to catch up' })
    // Counters arrive every second: at least the capture's two events and the chatbot's.
    const stats = await waitFor(() => thread!.consumer.stats.applied >= 3 && thread!.consumer.stats, {
      what: 'the counters from the thread',
    })
    expect(stats.lastAppliedOccurredAt).not.toBeNull()
    expect(thread.consumer.groupId).toBe('projector')
    const lag = await thread.consumer.lag()
    expect(lag).toHaveLength(EMBEDDED_EVENT_LOG.partitions)
    expect(lag.every((l) => l.lag === 0)).toBe(true)
    expect(errors).toEqual([])
  })

  it('starts the thread again when it dies, losing nothing and keeping its counters', async () => {
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    thread = await start()
    const first = await captureOne(apiKey, 'thread-crash-1')
    await waitFor(() => projected(first), { what: 'the first capture in the read models' })
    const counted = await waitFor(
      () => thread!.consumer.stats.applied > 0 && thread!.consumer.stats.applied,
      {
        what: 'the counters from the thread',
      },
    )
    const dying = thread.worker!
    await dying.terminate()
    // Captured while no projector runs: projected once the new thread is up.
    const second = await captureOne(apiKey, 'thread-crash-2')
    await waitFor(() => thread!.restarts === 1 && thread!.worker !== undefined && thread!.worker !== dying, {
      what: 'the thread started again',
    })
    await waitFor(() => projected(second), { what: 'the second capture in the read models' })
    expect(errors).toEqual(['the projector thread stopped; starting it again'])
    expect(thread.consumer.stats.applied).toBeGreaterThanOrEqual(counted)
    await waitFor(() => thread!.consumer.stats.applied >= counted + 2, {
      what: "the new thread's counters added",
    })
    const { rows } = await gateway.db.pool.query(
      'SELECT count(*)::int AS n FROM rm_messages WHERE conversation_id = ANY($1)',
      [[first, second]],
    )
    expect(rows[0].n).toBe(2)
  })

  it('finishes and stops when asked, leaving its checkpoints committed', async () => {
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    thread = await start()
    const worker = thread.worker!
    const id = await captureOne(apiKey, 'thread-stop')
    await waitFor(() => projected(id), { what: 'the capture in the read models' })
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve))
    await thread.stop()
    await exited
    expect(thread.worker).toBeUndefined()
    expect(thread.restarts).toBe(0)
    expect(await projectorCaughtUp(gateway.db.pool)).toBe(true)
    expect(errors).toEqual([])
    thread = undefined
  })

  it('rejects when the projector cannot start (its database unreachable)', async () => {
    await expect(
      startProjectorThread(
        {
          config: loadConfig({ DATABASE_URL: gateway.db.url, ENCRYPTION_MASTER_KEY: TEST_MASTER_KEY }),
          databaseUrl: 'postgres://nobody:wrong@127.0.0.1:1/none',
          log: false,
          poolSize: 2,
        },
        (msg) => errors.push(msg),
      ),
    ).rejects.toThrow(/the projector could not start/)
  })
})
