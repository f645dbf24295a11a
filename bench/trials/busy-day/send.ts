/** busy-day.ts send: the burst from concurrent senders, the ledger of what each answer said. */
import { writeFileSync } from 'node:fs'
import { type Ledger, readState, sleep } from './state.ts'
import { generate, plan, type Request } from './traffic.ts'

export interface SendOptions {
  readonly state: string
  readonly conversations: string
  readonly seed: string
  readonly 'bad-share': string
  readonly senders: string
}

export async function send(opts: SendOptions): Promise<void> {
  const state = await readState(opts.state)
  const n = Number(opts.conversations)
  const seed = Number(opts.seed)
  const ledger: Ledger = {
    accepted: {},
    internalIds: {},
    messagesStored: 0,
    statuses: {},
    badConversationIds: [],
    reversed: [],
    networkRetries: 0,
    networkErrors: {},
    wrongShapes: [],
    startedAt: new Date().toISOString(),
    finishedAt: '',
  }
  const work = plan(generate(n, seed), Number(opts['bad-share']), seed, ledger)
  let next = 0
  let done = 0
  const count = (key: string) => {
    ledger.statuses[key] = (ledger.statuses[key] ?? 0) + 1
  }
  async function sendOne(request: Request): Promise<void> {
    for (;;) {
      let response: Response
      try {
        response = await fetch(`${state.baseUrl}/api/v1/capture`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${request.key ?? state.apiKey}`,
            'content-type': request.contentType ?? 'application/json',
          },
          body: request.body,
        })
      } catch (error) {
        ledger.networkRetries++
        const cause = (error as { cause?: { code?: string; message?: string } }).cause
        const key = `${request.kind}: ${cause?.code ?? cause?.message ?? String(error)}`
        ledger.networkErrors[key] = (ledger.networkErrors[key] ?? 0) + 1
        await sleep(1000)
        continue
      }
      const text = await response.text()
      if (response.status === 429 || response.status === 503) {
        count(`${request.kind} ${response.status} (waited, sent again)`)
        await sleep(Number(response.headers.get('retry-after') ?? '1') * 1000)
        continue
      }
      count(`${request.kind} ${response.status}`)
      if (response.ok) {
        const body = JSON.parse(text) as { conversationId: string; messagesStored: number }
        ledger.messagesStored += body.messagesStored
        const ids = new Set([...(ledger.accepted[request.conversationId] ?? []), ...request.ids])
        ledger.accepted[request.conversationId] = [...ids]
        const internal = new Set([...(ledger.internalIds[request.conversationId] ?? []), body.conversationId])
        ledger.internalIds[request.conversationId] = [...internal]
      } else {
        const body = JSON.parse(text) as { ok?: boolean; error?: { code?: string; message?: string } }
        const shaped =
          body.ok === false && typeof body.error?.code === 'string' && typeof body.error.message === 'string'
        if (!shaped || response.status !== request.expect || /at .*\.(ts|js):\d+|SELECT|INSERT/.test(text))
          ledger.wrongShapes.push({ kind: request.kind, status: response.status, body: text.slice(0, 500) })
      }
      return
    }
  }
  const senders = Array.from({ length: Number(opts.senders) }, async () => {
    while (next < work.length) {
      const requests = work[next++]!
      for (const request of requests) await sendOne(request)
      if (++done % 500 === 0)
        console.log(`${new Date().toISOString()} ${done}/${work.length} conversations sent`)
    }
  })
  await Promise.all(senders)
  ledger.finishedAt = new Date().toISOString()
  writeFileSync(opts.state, JSON.stringify({ ...state, ledger }, null, 2))
  const acceptedMessages = Object.values(ledger.accepted).reduce((sum, ids) => sum + ids.length, 0)
  console.log(
    JSON.stringify(
      {
        startedAt: ledger.startedAt,
        finishedAt: ledger.finishedAt,
        conversationsAccepted: Object.keys(ledger.accepted).length,
        messagesAccepted: acceptedMessages,
        messagesStoredSum: ledger.messagesStored,
        networkRetries: ledger.networkRetries,
        networkErrors: ledger.networkErrors,
        statuses: ledger.statuses,
        wrongShapes: ledger.wrongShapes,
        conversationsWithSeveralInternalIds: Object.values(ledger.internalIds).filter((ids) => ids.length > 1)
          .length,
      },
      null,
      2,
    ),
  )
}
