/**
 * Read-model contention between the projector's partitions, checked by doing it: several chatbots of one
 * organization, their conversations spread over every partition, captured through the API of the built
 * service with analysis on (the model from ../shared/models), so that batches of different partitions
 * write the same rows at once: the organization's and each chatbot's hourly rollups, topic counts per hour
 * and day, the end users' activity and distinct counts (end users shared between chatbots), and each
 * chatbot's topics. Prints what the embedded Postgres logged meanwhile (support/postgres-log.ts): a
 * "deadlock detected" is a bug of the projector's lock order (bench/FINDINGS.md, "Projector deadlocks on
 * rm_topics"). The whole log is in bench/.cache/contention/postgres.log.
 *
 *   npm run bench:contention [-- --chatbots 8 --set clinc150|dstc11 --limit 1500 --users 60 --hours 6
 *                                 --concurrency 16 --seed 1 --skip-build]
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { withDatabase } from '@cas/db'
import pg from 'pg'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { conversationOf, loadSet, SET_NAMES, type SetName } from './quality/datasets.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import { postgresLogLines } from './support/postgres-log.ts'
import { seededRandom } from './support/random.ts'
import { startBenchServers } from './support/servers.ts'
import { createAccount, DIST_ALL_IN_ONE, startService } from './support/service.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: {
    chatbots: { type: 'string', default: '8' },
    set: { type: 'string', default: 'clinc150' },
    limit: { type: 'string', default: '1500' },
    /** End users, shared by the chatbots: a user's hours and the organization's distinct count. */
    users: { type: 'string', default: '60' },
    /** The conversations' messages are spread over this many past hours. */
    hours: { type: 'string', default: '6' },
    concurrency: { type: 'string', default: '16' },
    seed: { type: 'string', default: '1' },
    data: { type: 'string', default: path.join(ROOT, '../shared/data') },
    'skip-build': { type: 'boolean', default: false },
  },
})
if (!SET_NAMES.includes(values.set as SetName)) throw new Error(`--set is ${SET_NAMES.join(' or ')}`)
const chatbotCount = Number(values.chatbots)
const users = Number(values.users)
const hours = Number(values.hours)
const seed = Number(values.seed)
const set = loadSet(values.set as SetName, values.data, { seed, limit: Number(values.limit) })

if (!values['skip-build'] || !existsSync(DIST_ALL_IN_ONE)) {
  execFileSync(process.execPath, ['infra/build.mjs'], { cwd: ROOT, stdio: 'inherit' })
}
const logFile = path.join(ROOT, 'bench/.cache/contention/postgres.log')
mkdirSync(path.dirname(logFile), { recursive: true })
writeFileSync(logFile, '')
const servers = await startBenchServers({ name: 'contention', watchPostgresLog: true, postgresLog: logFile })
try {
  const databaseUrl = withDatabase(servers.postgres.url, 'postgres')
  console.log(machineLine(await machineInfo({ databaseUrl })))
  const service = await startService({
    databaseUrl,
    poolSize: 20,
    env: {
      ANALYSIS_MODEL_DIR: process.env.ANALYSIS_MODEL_DIR ?? TEST_MODEL_DIR,
      ANALYSIS_MODEL_HUB_URL: UNREACHABLE_HUB,
      DATA_DIR: path.join(servers.scratch, 'data'),
    },
  })
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 })
  try {
    for (let tries = 0; ; tries++) {
      const ready = (await (await fetch(`${service.url}/readyz`)).json()) as {
        details?: { analyzer?: { state: string } }
      }
      if (ready.details?.analyzer?.state === 'ready') break
      if (tries > 600) throw new Error(`the analyzer is not ready: ${JSON.stringify(ready.details)}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const account = await createAccount(service.url, 'contention')
    const apiKeys = [account.apiKey]
    for (let i = 1; i < chatbotCount; i++) {
      const res = await fetch(`${service.url}/api/v1/chatbots`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: account.cookie },
        body: JSON.stringify({ name: `contention ${i}` }),
      })
      if (!res.ok) throw new Error(`creating a chatbot answered ${res.status}: ${await res.text()}`)
      apiKeys.push(((await res.json()) as { apiKey: string }).apiKey)
    }

    const random = seededRandom(seed + 1)
    const now = Date.now()
    const conversations = set.requests.map((r, i) => {
      const startedAt = now - Math.floor(random() * hours * 3_600_000)
      return {
        apiKey: apiKeys[i % chatbotCount]!,
        user: { id: `user-${Math.floor(random() * users)}` },
        messages: conversationOf(r.text, i, { greetingShare: 0.3, random }).map((m, position) => ({
          ...m,
          sentAt: new Date(startedAt + position * 1000).toISOString(),
        })),
      }
    })
    const userMessages = conversations.flatMap((c) => c.messages).filter((m) => m.role === 'user').length
    const mark = servers.postgresLog!.mark()
    const started = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: Number(values.concurrency) }, async () => {
        for (let i = next++; i < conversations.length; i = next++) {
          const c = conversations[i]!
          const res = await fetch(`${service.url}/api/v1/capture`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${c.apiKey}` },
            body: JSON.stringify({ conversationId: `c-${i}`, user: c.user, messages: c.messages }),
          })
          if (!res.ok) throw new Error(`capture answered ${res.status}: ${await res.text()}`)
        }
      }),
    )
    const captureSeconds = (performance.now() - started) / 1000
    // Until every capture is analysed and the read models have every event.
    const deadline = Date.now() + 30 * 60_000
    for (;;) {
      const { rows } = await pool.query<{ jobs: number; open: number; caught_up: boolean }>(
        `SELECT (SELECT count(*)::int FROM analysis_jobs) AS jobs,
                (SELECT count(*)::int FROM analysis_jobs WHERE status IN ('pending', 'running')) AS open,
                coalesce((SELECT min(last_offset) FROM consumer_checkpoints WHERE group_id = 'projector'), -1)
                  >= coalesce((SELECT max(position) FROM event_journal), 0) AS caught_up`,
      )
      const r = rows[0]!
      if (r.jobs >= conversations.length && r.open === 0 && r.caught_up) break
      if (Date.now() > deadline) throw new Error(`not done within 30 minutes: ${JSON.stringify(r)}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const seconds = (performance.now() - started) / 1000
    const log = servers.postgresLog!.summarise(mark)
    const { rows: counts } = await pool.query<{ hourly: number; org: number; topics: number; dead: number }>(
      `SELECT (SELECT count(*)::int FROM rm_hourly_stats) AS hourly,
              (SELECT count(*)::int FROM rm_org_hourly_stats) AS org,
              (SELECT count(*)::int FROM rm_topics) AS topics,
              (SELECT count(*)::int FROM analysis_jobs WHERE status = 'dead') AS dead`,
    )
    console.log(
      `\n${set.name}: ${conversations.length} conversations (${userMessages} end-user messages) of ${users} end users over ${hours} hours, spread over ${chatbotCount} chatbots of one organization`,
    )
    console.log(
      `  captured in ${captureSeconds.toFixed(1)} s; analysed and projected after ${seconds.toFixed(1)} s (${(userMessages / seconds).toFixed(0)} end-user messages/s); ${counts[0]!.dead} jobs dead-lettered`,
    )
    console.log(
      `  read models: ${counts[0]!.hourly} chatbot hours, ${counts[0]!.org} organization hours, ${counts[0]!.topics} topics`,
    )
    for (const [i, line] of postgresLogLines(log).entries()) {
      console.log(`  ${i === 0 ? 'Postgres log: ' : '  '}${line}`)
    }
    if (log.deadlocks > 0) process.exitCode = 1
  } finally {
    await pool.end()
    await service.stop()
  }
} finally {
  await servers.stop()
}
