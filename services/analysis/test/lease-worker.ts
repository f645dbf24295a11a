/**
 * An analysis job runner in a process of its own, for the test that kills it with SIGKILL while it holds
 * jobs (job-lease.int.test.ts). Config from the environment: DATABASE_URL, LEASE_MS. Its analyzer holds
 * every call, so the jobs it claims stay in flight; it prints `holding <n>` once n calls wait.
 */
import { createPool } from '@cas/db'
import { AnalysisJobRunner } from '../src/job-runner.ts'
import { ScriptedAnalyzer } from './scripted-analyzer.ts'

const env = process.env
const pool = createPool(env.DATABASE_URL!, { max: 4 })
const analyzer = new ScriptedAnalyzer()
analyzer.hold()
const runner = new AnalysisJobRunner({
  pool,
  analyzer,
  concurrency: 4,
  maxAttempts: 3,
  leaseMs: Number(env.LEASE_MS),
  log: (msg, fields) => console.error(new Date().toISOString(), msg, JSON.stringify(fields)),
})
runner.start()
let reported = 0
setInterval(() => {
  if (analyzer.waiting === reported) return
  reported = analyzer.waiting
  console.log(`holding ${reported}`)
}, 10)
