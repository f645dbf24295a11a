// Reads vitest's JSON report and fails unless every test ran and passed, and the Kafka-backed tests
// and the dashboard's browser tests were among them. Prints the Kafka version tested against and a
// closing "N passed, N failed" line.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const tests = report.testResults.flatMap((file) =>
  file.assertionResults.map((t) => ({ ...t, file: file.name.replace(`${process.cwd()}/`, '') })),
)
const by = (status) => tests.filter((t) => t.status === status)
const passed = by('passed')
const failed = by('failed')
const notRun = tests.filter((t) => !['passed', 'failed'].includes(t.status))
const kafka = passed.filter((t) => /kafka/i.test(`${t.file} ${t.fullName}`))
const browser = passed.filter((t) => t.file === 'test/dashboard-browser.test.ts')
const problems = []
if (failed.length) problems.push(`${failed.length} failed`)
if (notRun.length)
  problems.push(`${notRun.length} skipped or todo: ${notRun.map((t) => t.fullName).join('; ')}`)
if (kafka.length < 5)
  problems.push(`only ${kafka.length} Kafka-backed tests passed: the Kafka tests did not run`)
if (browser.length === 0) problems.push("the dashboard's browser tests did not run")
if (report.numFailedTestSuites) problems.push(`${report.numFailedTestSuites} test suites failed`)
if (!report.success) problems.push('vitest reported a failure (an unhandled error or a crashed worker)')
// A worker that crashes takes its files' tests with it, unreported: every test file must have reported.
const testFiles = execFileSync('git', ['ls-files', '*.test.ts'], { encoding: 'utf8' })
  .split('\n')
  .filter(Boolean)
const reported = new Set(report.testResults.map((file) => file.name.replace(`${process.cwd()}/`, '')))
const silent = testFiles.filter((f) => !reported.has(f) || !tests.some((t) => t.file === f))
if (silent.length) problems.push(`test files that reported no test: ${silent.join(', ')}`)
const version = readFileSync('infra/kafka/broker.ts', 'utf8').match(/KAFKA_VERSION = '([0-9.]+)'/)?.[1]
console.log(`Kafka-backed tests passed: ${kafka.length}, against Apache Kafka ${version}`)
console.log(`Browser tests passed: ${browser.length} (screenshots in .ci-artifacts/screenshots/)`)
if (problems.length) {
  console.error(`test report check FAILED: ${problems.join('; ')}`)
}
console.log(`${passed.length} passed, ${failed.length} failed, ${notRun.length} skipped`)
process.exit(problems.length ? 1 : 0)
