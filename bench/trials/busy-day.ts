/**
 * npx tsx bench/trials/busy-day.ts <setup|send|check|settle> [options]   (--help for the options)
 *
 * A busy chatbot's day against a running service (trial7): the operator's view, through the HTTP API only,
 * except `check`, which also reads the read models of the embedded PostgreSQL (read-only transactions).
 *   setup   sign up, create a chatbot; writes the session cookie and API key to --state
 *   send    a burst of conversations (2–6 messages, end users' requests from CLINC150's test split and DSTC11's
 *           development set, bot replies and a share of thanks/complaints of this script's own) from several
 *           concurrent senders, as fast as capture takes them (429 and 503 waited out as Retry-After says),
 *           mixed with bad input (invalid JSON, a wrong key, oversize, over-long content, too many messages, a
 *           bad role, a wrong content type) and accepted oddities (duplicate message ids within a request, a
 *           conversation sent again, timestamps out of order); a request that fails on the network (the
 *           service killed) is sent again until it is answered, as an SDK retries. Writes the ledger to --state.
 *   check   the counts the API gives (overview, signals, topics, conversation list) beside the ledger and the
 *           read models (duplicates, aggregates against rows, analysis jobs, dead letters, bad input stored)
 *   settle  polls the topics' `reclustering` and /api/v1/status every --interval s, with the load average,
 *           until settled and --after-settled s more, and says whether the topics changed after settling
 */
import { readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { seededRandom, seededShuffle } from '../support/random.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const DATA = path.resolve(ROOT, '../shared/data')

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    help: { type: 'boolean' },
    'base-url': { type: 'string', default: 'http://127.0.0.1:3177' },
    state: { type: 'string', default: '/tmp/busy-day-state.json' },
    conversations: { type: 'string', default: '5000' },
    senders: { type: 'string', default: '8' },
    'bad-share': { type: 'string', default: '0.05' },
    seed: { type: 'string', default: '7' },
    days: { type: 'string', default: '2' },
    'data-dir': { type: 'string', default: '/tmp/trial7-data' },
    interval: { type: 'string', default: '15' },
    'after-settled': { type: 'string', default: '300' },
  },
})

type Message = { id: string; role: 'user' | 'assistant'; content: string; sentAt: string }
type Capture = { conversationId: string; messages: Message[]; user?: { id: string } }
type State = {
  baseUrl: string
  cookie: string
  apiKey: string
  chatbotId: string
  ledger?: Ledger
}
type Ledger = {
  accepted: Record<string, string[]> // conversationId → message ids acknowledged by a 2xx
  internalIds: Record<string, string[]> // conversationId → the internal ids its 2xx answers gave
  messagesStored: number
  statuses: Record<string, number> // "<kind> <status>" → count
  badConversationIds: string[]
  reversed: string[] // conversations whose timestamps were sent out of order
  networkRetries: number
  networkErrors: Record<string, number> // "<kind>: <cause>" → count
  wrongShapes: { kind: string; status: number; body: string }[]
  startedAt: string
  finishedAt: string
}

const HELP = `usage: npx tsx bench/trials/busy-day.ts <setup|send|check|settle> [options]
  --base-url URL        the service (${opts['base-url']})
  --state FILE          cookie, key, chatbot and ledger (${opts.state})
  --conversations N     send: conversations in the burst (5000)
  --senders N           send: concurrent senders (8)
  --bad-share F         send: share of requests that are bad input or accepted oddities (0.05)
  --seed N              send: seed of the generated conversations (7)
  --days N              check/settle: the range read from the API (2)
  --data-dir DIR        check: the service's DATA_DIR, for the embedded PostgreSQL's port and password
  --interval S          settle: seconds between polls (15)
  --after-settled S     settle: seconds polled after it first says settled (300)`

function loadRequests(): { clinc: string[]; dstc: string[] } {
  const clinc = (
    JSON.parse(readFileSync(path.join(DATA, 'clinc150/data_full.json'), 'utf8')).test as [string, string][]
  ).map(([text]) => text)
  const dstc = readFileSync(path.join(DATA, 'dstc11/development.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { utterance: string }).utterance)
  return { clinc, dstc }
}

const REPLIES = [
  'Sure, I can help with that. Here is what you need to do.',
  'I have looked that up for you: it is done, you will get a confirmation shortly.',
  "Sorry, I didn't quite get that. Could you rephrase?",
  "That's beyond what I can help with here.",
  'I have passed this to a colleague, who will email you today.',
  'Here is the information you asked for.',
]
const THANKS = ['Thanks, that sorted it.', 'Perfect, thank you!', 'Great, that is exactly what I needed.']
const COMPLAINTS = [
  "That doesn't answer my question.",
  'This is useless, I want to talk to a person.',
  'You said that already. Not helpful at all.',
]

function generate(n: number, seed: number): Capture[] {
  const { clinc, dstc } = loadRequests()
  const random = seededRandom(seed)
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!
  const clincOrder = seededShuffle(clinc, seed)
  const dstcOrder = seededShuffle(dstc, seed + 1)
  const now = Date.now()
  const out: Capture[] = []
  for (let c = 0; c < n; c++) {
    const fromDstc = random() < 0.4
    const source = fromDstc ? dstcOrder : clincOrder
    const length = 2 + Math.floor(random() * 5)
    const ending = random()
    const start = now - Math.floor(random() * 3 * 3600_000) - 600_000
    const messages: Message[] = []
    for (let i = 0; i < length; i++) {
      const role = i % 2 === 0 ? 'user' : 'assistant'
      let content: string
      if (role === 'assistant') content = pick(REPLIES)
      else if (i === 0) content = source[(c * 3) % source.length]!
      else if (i >= 2 && ending < 0.2) content = pick(THANKS)
      else if (i >= 2 && ending < 0.35) content = pick(COMPLAINTS)
      else content = source[(c * 3 + i) % source.length]!
      messages.push({ id: `m${i}`, role, content, sentAt: new Date(start + i * 20_000).toISOString() })
    }
    out.push({
      conversationId: `busy-${seed}-${c}`,
      messages,
      user: { id: `user-${Math.floor(random() * 1500)}` },
    })
  }
  return out
}

async function readState(): Promise<State> {
  return JSON.parse(readFileSync(opts.state!, 'utf8')) as State
}

async function setup(): Promise<void> {
  const base = opts['base-url']!
  const email = `trial7-${Date.now()}@example.com`
  const signup = await fetch(`${base}/api/v1/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'a long passphrase', organizationName: 'Busy day' }),
  })
  if (!signup.ok) throw new Error(`signup ${signup.status} ${await signup.text()}`)
  const cookie = signup.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  const created = await fetch(`${base}/api/v1/chatbots`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name: 'Busy chatbot' }),
  })
  const body = (await created.json()) as { chatbot: { id: string }; apiKey: string }
  if (!created.ok) throw new Error(`create ${created.status} ${JSON.stringify(body)}`)
  const state: State = { baseUrl: base, cookie, apiKey: body.apiKey, chatbotId: body.chatbot.id }
  writeFileSync(opts.state!, JSON.stringify(state, null, 2))
  console.log(`signed up ${email}; chatbot ${state.chatbotId}; state in ${opts.state}`)
}

type Request = {
  kind: string
  conversationId: string
  body: string
  contentType?: string
  key?: string
  ids: string[] // the message ids a 2xx acknowledges
  expect: number
}

function captureRequest(kind: string, capture: Capture, expect = 200): Request {
  return {
    kind,
    conversationId: capture.conversationId,
    body: JSON.stringify(capture),
    ids: capture.messages.map((m) => m.id),
    expect,
  }
}

/** The burst's requests, in sending order: good captures with bad input and oddities mixed in. */
function plan(captures: Capture[], badShare: number, seed: number, ledger: Ledger): Request[][] {
  const random = seededRandom(seed + 2)
  const perConversation: Request[][] = []
  const badKinds = [
    'invalid-json',
    'wrong-key',
    'oversize',
    'content-too-long',
    'too-many',
    'bad-role',
    'text-plain',
  ]
  let bad = 0
  for (const capture of captures) {
    const requests: Request[] = []
    const roll = random()
    if (roll < 0.1 && capture.messages.length >= 4) {
      // Timestamps out of order: the later half first, then the earlier half.
      const half = Math.floor(capture.messages.length / 2)
      requests.push(
        captureRequest('later-half-first', { ...capture, messages: capture.messages.slice(half) }),
      )
      requests.push(
        captureRequest('earlier-half-second', { ...capture, messages: capture.messages.slice(0, half) }),
      )
      ledger.reversed.push(capture.conversationId)
    } else if (roll < 0.3) {
      const half = Math.ceil(capture.messages.length / 2)
      requests.push(captureRequest('first-half', { ...capture, messages: capture.messages.slice(0, half) }))
      requests.push(captureRequest('second-half', { ...capture, messages: capture.messages.slice(half) }))
    } else requests.push(captureRequest('whole', capture))
    if (random() < badShare) {
      // Accepted oddities: the same conversation sent again, and a request repeating a message id.
      requests.push(captureRequest('sent-again', capture))
      const twice = { ...capture.messages[0]!, content: `${capture.messages[0]!.content} (edited)` }
      requests.push(
        captureRequest('duplicate-id-in-request', { ...capture, messages: [capture.messages[0]!, twice] }),
      )
    }
    if (random() < badShare) {
      const kind = badKinds[bad++ % badKinds.length]!
      const id = `bad-${kind}-${bad}`
      ledger.badConversationIds.push(id)
      const good: Capture = { conversationId: id, messages: capture.messages }
      const request: Request = { kind, conversationId: id, body: JSON.stringify(good), ids: [], expect: 400 }
      if (kind === 'invalid-json') request.body = request.body.slice(0, -7)
      else if (kind === 'wrong-key') {
        request.key = `svc_live_${'0'.repeat(31)}${bad % 10}`
        request.expect = 401
      } else if (kind === 'oversize') {
        const big = 'x'.repeat(30_000)
        request.body = JSON.stringify({
          conversationId: id,
          messages: Array.from({ length: 100 }, (_, i) => ({
            id: `o${i}`,
            role: 'user',
            content: `${big}${i}`,
          })),
          padding: 'y'.repeat(1_500_000),
        })
        request.expect = 413
      } else if (kind === 'content-too-long')
        request.body = JSON.stringify({
          conversationId: id,
          messages: [{ id: 'l', role: 'user', content: 'z'.repeat(32_769) }],
        })
      else if (kind === 'too-many')
        request.body = JSON.stringify({
          conversationId: id,
          messages: Array.from({ length: 101 }, (_, i) => ({ id: `t${i}`, role: 'user', content: 'hello' })),
        })
      else if (kind === 'bad-role')
        request.body = JSON.stringify({
          conversationId: id,
          messages: [{ id: 'r', role: 'customer', content: 'hi' }],
        })
      else {
        request.contentType = 'text/plain'
        request.expect = 415
      }
      requests.push(request)
    }
    perConversation.push(requests)
  }
  return perConversation
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function send(): Promise<void> {
  const state = await readState()
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
  writeFileSync(opts.state!, JSON.stringify({ ...state, ledger }, null, 2))
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

async function api<T>(state: State, url: string): Promise<T> {
  const response = await fetch(`${state.baseUrl}${url}`, { headers: { cookie: state.cookie } })
  if (!response.ok) throw new Error(`${url} ${response.status} ${await response.text()}`)
  return (await response.json()) as T
}

async function readModels(): Promise<pg.Client> {
  const dataDir = opts['data-dir']!
  const port = Number(readFileSync(path.join(dataDir, 'postgres/postmaster.pid'), 'utf8').split('\n')[3])
  const password = readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim()
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' })
  await client.connect()
  await client.query('SET default_transaction_read_only = on')
  return client
}

async function check(): Promise<void> {
  const state = await readState()
  const ledger = state.ledger!
  const q = `chatbotId=${state.chatbotId}&days=${opts.days}`
  const overview = await api<Record<string, unknown>>(state, `/api/v1/analytics/overview?${q}`)
  const signals = await api<{
    conversations: number
    signals: { name: string; conversations: number; conversationsChecked: number }[]
  }>(state, `/api/v1/analytics/signals?${q}`)
  const topics = await api<Record<string, unknown>>(state, `/api/v1/analytics/topics?${q}`)
  let listed = 0
  let listedMessages = 0
  let cursor: string | null = null
  do {
    const page: { conversations: { messageCount: number }[]; nextCursor: string | null } = await api(
      state,
      `/api/v1/conversations?chatbotId=${state.chatbotId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
    )
    listed += page.conversations.length
    listedMessages += page.conversations.reduce((sum, c) => sum + c.messageCount, 0)
    cursor = page.nextCursor
  } while (cursor)
  const acceptedMessages = Object.values(ledger.accepted).reduce((sum, ids) => sum + ids.length, 0)
  const db = await readModels()
  const one = async (sql: string, params: unknown[] = [state.chatbotId]) =>
    (await db.query(sql, params)).rows[0] as Record<string, unknown>
  const rows = {
    conversations: await one('SELECT count(*)::int AS n FROM rm_conversations WHERE chatbot_id = $1'),
    conversationMessageCounts: await one(
      'SELECT sum(message_count)::int AS n FROM rm_conversations WHERE chatbot_id = $1',
    ),
    messages: await one(
      "SELECT count(*)::int AS n, count(*) FILTER (WHERE role = 'user')::int AS user, count(sentiment_score)::int AS scored FROM rm_messages WHERE chatbot_id = $1",
    ),
    captureIds: await one(
      'SELECT count(*)::int AS n FROM capture_message_ids i JOIN rm_conversations c ON c.id = i.conversation_id WHERE c.chatbot_id = $1',
    ),
    hourlyStats: await one(
      'SELECT sum(messages)::int AS messages, sum(user_messages)::int AS user, sum(sentiment_count)::int AS scored FROM rm_hourly_stats WHERE chatbot_id = $1',
    ),
    analysisResults: await one('SELECT count(*)::int AS n FROM analysis_results WHERE chatbot_id = $1'),
    hourlyTopics: await one('SELECT sum(messages)::int AS n FROM rm_hourly_topics WHERE chatbot_id = $1'),
    messageTopics: await one(
      "SELECT count(*)::int AS n FROM rm_messages m, unnest(coalesce(m.topics, '{}')) t WHERE m.chatbot_id = $1",
    ),
    signalRows: await one('SELECT count(*)::int AS n FROM rm_conversation_signals WHERE chatbot_id = $1'),
    signalsDecided: await one('SELECT count(*)::int AS n FROM rm_signals_decided WHERE chatbot_id = $1'),
    jobs: await one(
      "SELECT count(*)::int AS n, count(*) FILTER (WHERE status <> 'done')::int AS not_done, string_agg(DISTINCT status, ',') AS statuses FROM analysis_jobs WHERE chatbot_id = $1",
    ),
    analysedEvents: await one(
      "SELECT type, count(*)::int AS n FROM event_journal WHERE chatbot_id = $1 AND type = 'analysis.messages-analyzed' GROUP BY type",
    ),
    deadLetters: await one(
      'SELECT (SELECT count(*) FROM dead_letters)::int AS consumer, (SELECT count(*) FROM analysis_dead_letters)::int AS analysis',
      [],
    ),
  }
  const badStored = (
    await db.query('SELECT count(*)::int AS n FROM rm_conversations WHERE external_id = ANY($1)', [
      ledger.badConversationIds,
    ])
  ).rows[0]
  const reversedOutOfOrder = (
    await db.query(
      `SELECT count(*)::int AS n FROM rm_conversations c WHERE c.chatbot_id = $1 AND c.external_id = ANY($2) AND EXISTS (
         SELECT 1 FROM rm_messages m WHERE m.conversation_id = c.id AND m.message_id = 'm0'
           AND m.sent_at <> c.first_message_at)`,
      [state.chatbotId, ledger.reversed],
    )
  ).rows[0]
  const editedStored = (
    await db.query(
      "SELECT count(*)::int AS n FROM rm_messages WHERE chatbot_id = $1 AND content LIKE '% (edited)'",
      [state.chatbotId],
    )
  ).rows[0]
  await db.end()
  console.log(
    JSON.stringify(
      {
        ledger: {
          conversationsAccepted: Object.keys(ledger.accepted).length,
          messagesAccepted: acceptedMessages,
          badRequests: ledger.badConversationIds.length,
        },
        api: {
          overview,
          signals: {
            conversations: signals.conversations,
            byName: signals.signals.map((s) => [s.name, s.conversations, s.conversationsChecked]),
          },
          topics: Object.fromEntries(
            Object.entries(topics).filter(([k]) => !['topics', 'themes', 'hiddenTopics'].includes(k)),
          ),
          topicCount: (topics.topics as unknown[] | undefined)?.length,
          list: { conversations: listed, messages: listedMessages },
        },
        rows,
        badConversationsStored: badStored,
        reversedWithWrongFirstMessage: reversedOutOfOrder,
        duplicateIdSecondContentStored: editedStored,
      },
      null,
      2,
    ),
  )
}

type TopicsAnswer = {
  topics: { id: string; label: string; conversations: number }[]
  reclustering: { settling: boolean; lastReclusteredAt: string | null; retrying: unknown }
}

async function settle(): Promise<void> {
  const state = await readState()
  const q = `chatbotId=${state.chatbotId}&days=${opts.days}`
  const interval = Number(opts.interval) * 1000
  let settledAt: number | null = null
  let settledPrint: string | null = null
  for (;;) {
    // Every topic (the API's most, 1,000), so that a change beyond the first page shows too.
    const topics = await api<TopicsAnswer>(state, `/api/v1/analytics/topics?${q}&limit=1000`)
    const status = await api<{
      projection: { state: string; behindSeconds: number | null }
      analysis: { state: string; behindSeconds: number | null }
    }>(state, '/api/v1/status')
    const print = topics.topics.map((t) => `${t.id}:${t.label}:${t.conversations}`).join('|')
    const { settling, lastReclusteredAt, retrying } = topics.reclustering
    const changed = settledPrint !== null && print !== settledPrint
    console.log(
      [
        new Date().toISOString(),
        `load ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
        `projection ${status.projection.state} ${status.projection.behindSeconds}s`,
        `analysis ${status.analysis.state} ${status.analysis.behindSeconds}s`,
        `settling ${settling}`,
        `last reclustered ${lastReclusteredAt}`,
        `retrying ${JSON.stringify(retrying)}`,
        `topics ${topics.topics.length}`,
        settledPrint === null ? '' : `changed since settled: ${changed}`,
      ].join('; '),
    )
    if (!settling && status.analysis.state === 'up-to-date' && settledAt === null) {
      settledAt = Date.now()
      settledPrint = print
      console.log(`settled (first read): ${new Date(settledAt).toISOString()}`)
    }
    if (settledAt !== null && Date.now() - settledAt >= Number(opts['after-settled']) * 1000) return
    await sleep(interval)
  }
}

if (opts.help || positionals.length !== 1) console.log(HELP)
else {
  const command = positionals[0]
  const run = { setup, send, check, settle }[command as 'setup']
  if (!run) console.log(HELP)
  else await run()
}
