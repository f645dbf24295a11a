/**
 * The Python SDK (sdks/python) against the real service: its pytest suite, run in a virtual environment
 * under .cache/ (python3 -m venv; the SDK installed editable, pytest and the type generator from PyPI),
 * against the built all-in-one (`npm start`'s bundle) on its embedded Postgres and, when this run has
 * Kafka, the test Kafka as its event log.
 *
 * pytest restarts the service through a small control server here (CAS_TEST_CONTROL_URL): POST /crash
 * kills it (SIGKILL, so requests in flight get no answer) and its Postgres; POST /start starts it again on
 * the same data and port, answering once /healthz does. The verdict is pytest's exit code and its JUnit
 * XML: tests ran, none failed, none skipped. Then ruff (installed with the SDK's dev extra) lints the SDK.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type BuiltApp, buildApp, startBuiltApp } from './support/built-app.ts'
import { createTestTopics, kafkaBrokers } from './support/kafka.ts'
import { hasTestModel, modelConfigEnv } from './support/model.ts'
import { ensureVenv as ensurePythonVenv, run } from './support/python.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const SDK = path.join(ROOT, 'sdks', 'python')
const VENV = path.join(ROOT, '.cache', 'sdk-python-venv')
const JUNIT = path.join(ROOT, '.cache', 'sdk-python-junit.xml')
/** Captures per minute and API key: low, so that the 429 test meets the limit within a few requests. */
const RATE_LIMIT = 20

let app: BuiltApp
let control: Server
let controlUrl = ''

/** The venv's python, (re)installing when the SDK's pyproject.toml changed since the last install. */
const ensureVenv = () =>
  ensurePythonVenv(VENV, ['--editable', `${SDK}[dev]`], readFileSync(path.join(SDK, 'pyproject.toml')))

/** POST /crash and POST /start, for pytest to restart the service; one at a time. */
function startControl(): Promise<void> {
  let busy: Promise<unknown> = Promise.resolve()
  control = createServer((request, response) => {
    const action = request.method === 'POST' ? request.url : undefined
    const step = action === '/crash' ? () => app.kill() : action === '/start' ? () => app.start() : undefined
    if (!step) {
      response.writeHead(404).end()
      return
    }
    const done = busy.then(step)
    busy = done.catch(() => {})
    done.then(
      () => response.writeHead(204).end(),
      (err: unknown) => response.writeHead(500).end(String(err)),
    )
  })
  return new Promise((resolve) =>
    control.listen(0, '127.0.0.1', () => {
      const address = control.address()
      if (address && typeof address === 'object') controlUrl = `http://127.0.0.1:${address.port}`
      resolve()
    }),
  )
}

beforeAll(async () => {
  const [python] = await Promise.all([ensureVenv(), buildApp()])
  expect(existsSync(python)).toBe(true)
  const brokers = kafkaBrokers()
  const kafka = brokers ? await createTestTopics(4) : undefined
  const env = {
    ...(hasTestModel ? modelConfigEnv() : {}),
    CAPTURE_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    ...(kafka ? { KAFKA_BROKERS: kafka.brokers.join(','), KAFKA_TOPIC_PREFIX: kafka.topicPrefix } : {}),
  }
  app = await startBuiltApp(env)
  await startControl()
}, 900_000)

afterAll(async () => {
  await new Promise((resolve) => control?.close(resolve))
  await app?.stop()
})

it('passes its pytest suite against the real service: batching, restarts, 429, a dead server, exit', async () => {
  rmSync(JUNIT, { force: true })
  const pytest = await run(
    path.join(VENV, 'bin', 'python'),
    ['-m', 'pytest', '-p', 'no:cacheprovider', `--junitxml=${JUNIT}`, '-o', 'junit_family=xunit2', 'tests'],
    {
      cwd: SDK,
      timeoutMs: 1_500_000,
      env: {
        ...process.env,
        CAS_TEST_URL: app.baseUrl,
        CAS_TEST_CONTROL_URL: controlUrl,
        CAS_TEST_RATE_LIMIT: String(RATE_LIMIT),
        PYTHONDONTWRITEBYTECODE: '1',
      },
    },
  )
  expect(pytest.code, pytest.output.slice(-8000)).toBe(0)
  const xml = readFileSync(JUNIT, 'utf8')
  const suite = /<testsuite\b[^>]*>/.exec(xml)?.[0] ?? ''
  const count = (name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(suite)?.[1] ?? Number.NaN)
  expect({
    failures: count('failures'),
    errors: count('errors'),
    skipped: count('skipped'),
  }).toEqual({ failures: 0, errors: 0, skipped: 0 })
  expect(count('tests')).toBeGreaterThanOrEqual(20)
}, 1_600_000)

it('passes ruff (lint and format), as installed with the SDK', async () => {
  const ruff = path.join(VENV, 'bin', 'ruff')
  const lint = await run(ruff, ['check', '--no-cache', '.'], { cwd: SDK, timeoutMs: 120_000 })
  expect(lint.code, lint.output).toBe(0)
  const format = await run(ruff, ['format', '--no-cache', '--check', '.'], { cwd: SDK, timeoutMs: 120_000 })
  expect(format.code, format.output).toBe(0)
})
