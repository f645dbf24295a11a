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
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { check } from './busy-day/check.ts'
import { send } from './busy-day/send.ts'
import { settle } from './busy-day/settle.ts'
import type { State } from './busy-day/state.ts'

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

if (opts.help || positionals.length !== 1) console.log(HELP)
else {
  const command = positionals[0]
  const values = opts as { [K in keyof typeof opts]-?: Exclude<(typeof opts)[K], undefined> }
  const run = {
    setup,
    send: () => send(values),
    check: () => check(values),
    settle: () => settle(values),
  }[command as 'setup']
  if (!run) console.log(HELP)
  else await run()
}
