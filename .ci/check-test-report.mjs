// Reads vitest's JSON report and fails unless every test ran and passed, and the Kafka-backed tests
// were among them. Prints the Kafka version tested against and a closing "N passed, N failed" line.
//   node .ci/check-test-report.mjs <report.json>                  npm test: every *.test.ts but the fault suite
//   node .ci/check-test-report.mjs <report.json> --suite faults   npm run test:faults: every *.fault.test.ts
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const faults = process.argv[3] === '--suite' && process.argv[4] === 'faults'
const isFaultTest = (file) => file.endsWith('.fault.test.ts')
const tests = report.testResults.flatMap((file) =>
  file.assertionResults.map((t) => ({ ...t, file: file.name.replace(`${process.cwd()}/`, '') })),
)
const by = (status) => tests.filter((t) => t.status === status)
const passed = by('passed')
const failed = by('failed')
const notRun = tests.filter((t) => !['passed', 'failed'].includes(t.status))
const kafka = passed.filter((t) => /kafka/i.test(`${t.file} ${t.fullName}`))
const problems = []
if (failed.length) problems.push(`${failed.length} failed`)
if (notRun.length)
  problems.push(`${notRun.length} skipped or todo: ${notRun.map((t) => t.fullName).join('; ')}`)
if (kafka.length < 5 && !faults)
  problems.push(`only ${kafka.length} Kafka-backed tests passed: the Kafka tests did not run`)
if (report.numFailedTestSuites) problems.push(`${report.numFailedTestSuites} test suites failed`)
if (!report.success) problems.push('vitest reported a failure (an unhandled error or a crashed worker)')
// A worker that crashes takes its files' tests with it, unreported: every test file must have reported.
const testFiles = execFileSync('git', ['ls-files', '*.test.ts'], { encoding: 'utf8' })
  .split('\n')
  .filter(Boolean)
  .filter((f) => isFaultTest(f) === faults)
const reported = new Set(report.testResults.map((file) => file.name.replace(`${process.cwd()}/`, '')))
const silent = testFiles.filter((f) => !reported.has(f) || !tests.some((t) => t.file === f))
if (silent.length) problems.push(`test files that reported no test: ${silent.join(', ')}`)
const version = readFileSync('infra/kafka/broker.ts', 'utf8').match(/KAFKA_VERSION = '([0-9.]+)'/)?.[1]
console.log(`Kafka-backed tests passed: ${kafka.length}, against Apache Kafka ${version}`)
if (problems.length) {
  console.error(`test report check FAILED: ${problems.join('; ')}`)
}
console.log(`${passed.length} passed, ${failed.length} failed, ${notRun.length} skipped`)
process.exit(problems.length ? 1 : 0)
