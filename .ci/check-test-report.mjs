// Reads vitest's JSON report and fails unless every test ran and passed, and the Kafka-backed tests
// and the dashboard's browser tests were among them (unless --only excludes them). Prints the Kafka
// version tested against, the PostgreSQL the run used and a closing "N passed, N failed" line.
//   node .ci/check-test-report.mjs <report.json> [--only <dir/>] [--exclude <dir/>] [--min-kafka <n>] [--node <major>]
//     [--postgres <major>]
// --only / --exclude say which test files the run covered (each must have reported); --min-kafka is
// how many Kafka-backed tests must have passed (default 5); --node is the Node.js major version the run
// was to use: run this check with the PATH the tests had, its `node` is theirs, and it must be that one.
// --postgres is the PostgreSQL major version the run was to use (TEST_POSTGRES_BINARIES): the name of
// test/postgres-under-test.test.ts's first test says which server it ran on.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const args = process.argv.slice(3)
const option = (name) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
const only = option('--only')
const exclude = option('--exclude')
const minKafka = Number(option('--min-kafka') ?? 5)
const nodeMajor = option('--node')
const postgresMajor = option('--postgres')
const report = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const tests = report.testResults.flatMap((file) =>
  file.assertionResults.map((t) => ({ ...t, file: file.name.replace(`${process.cwd()}/`, '') })),
)
const by = (status) => tests.filter((t) => t.status === status)
const passed = by('passed')
const failed = by('failed')
const notRun = tests.filter((t) => !['passed', 'failed'].includes(t.status))
const kafka = passed.filter((t) => /kafka/i.test(`${t.file} ${t.fullName}`))
// The dashboard's browser tests: a file per page under test/dashboard/.
const BROWSER_DIR = 'test/dashboard/'
const browser = passed.filter((t) => t.file.startsWith(BROWSER_DIR))
const problems = []
if (failed.length) problems.push(`${failed.length} failed`)
if (notRun.length)
  problems.push(`${notRun.length} skipped or todo: ${notRun.map((t) => t.fullName).join('; ')}`)
if (kafka.length < minKafka)
  problems.push(`only ${kafka.length} Kafka-backed tests passed: the Kafka tests did not run`)
const browserExpected =
  (only === undefined || BROWSER_DIR.startsWith(only)) &&
  (exclude === undefined || !BROWSER_DIR.startsWith(exclude))
if (browserExpected && browser.length === 0) problems.push("the dashboard's browser tests did not run")
if (nodeMajor !== undefined && process.versions.node.split('.')[0] !== nodeMajor)
  problems.push(`the tests were to run on Node.js ${nodeMajor}, but node on this PATH is ${process.version}`)
// "the test run runs on PostgreSQL <major>": absent when the run did not cover test/.
const postgresUsed = passed
  .map((t) => /^the test run runs on PostgreSQL (\d+)$/.exec(t.fullName)?.[1])
  .find((major) => major !== undefined)
if (postgresMajor !== undefined && postgresUsed !== postgresMajor)
  problems.push(
    `the tests were to run on PostgreSQL ${postgresMajor}, but ${postgresUsed === undefined ? 'no passed test says which server they ran on' : `they ran on PostgreSQL ${postgresUsed}`}`,
  )
if (report.numFailedTestSuites) problems.push(`${report.numFailedTestSuites} test suites failed`)
if (!report.success) problems.push('vitest reported a failure (an unhandled error or a crashed worker)')
// A worker that crashes takes its files' tests with it, unreported: every test file must have reported.
const testFiles = execFileSync('git', ['ls-files', '*.test.ts'], { encoding: 'utf8' })
  .split('\n')
  .filter(Boolean)
  .filter(
    (f) => (only === undefined || f.startsWith(only)) && (exclude === undefined || !f.startsWith(exclude)),
  )
const reported = new Set(report.testResults.map((file) => file.name.replace(`${process.cwd()}/`, '')))
const silent = testFiles.filter((f) => !reported.has(f) || !tests.some((t) => t.file === f))
if (silent.length) problems.push(`test files that reported no test: ${silent.join(', ')}`)
const version = readFileSync('infra/kafka/broker.ts', 'utf8').match(/KAFKA_VERSION = '([0-9.]+)'/)?.[1]
console.log(`Node.js ${process.version}`)
if (postgresUsed !== undefined) console.log(`PostgreSQL under test: ${postgresUsed}`)
console.log(`Kafka-backed tests passed: ${kafka.length}, against Apache Kafka ${version}`)
if (browserExpected)
  console.log(`Browser tests passed: ${browser.length} (screenshots in .ci-artifacts/screenshots/)`)
if (problems.length) {
  console.error(`test report check FAILED: ${problems.join('; ')}`)
}
console.log(`${passed.length} passed, ${failed.length} failed, ${notRun.length} skipped`)
process.exit(problems.length ? 1 : 0)
