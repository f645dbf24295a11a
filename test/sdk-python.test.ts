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
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type BuiltApp, buildApp, startBuiltApp } from './support/built-app.ts'
import { createTestTopics, kafkaBrokers } from './support/kafka.ts'
import { hasTestModel, modelConfigEnv } from './support/model.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const SDK = path.join(ROOT, 'sdks', 'python')
const VENV = path.join(ROOT, '.cache', 'sdk-python-venv')
const MARKER = path.join(VENV, 'installed')
const JUNIT = path.join(ROOT, '.cache', 'sdk-python-junit.xml')
/** Captures per minute and API key: low, so that the 429 test meets the limit within a few requests. */
const RATE_LIMIT = 20

let app: BuiltApp
let control: Server
let controlUrl = ''

interface Run {
  readonly code: number | null
  readonly output: string
}

function run(
  command: string,
  args: string[],
  opts: { timeoutMs: number; cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const chunks: Buffer[] = []
    child.stdout.on('data', (c: Buffer) => chunks.push(c))
    child.stderr.on('data', (c: Buffer) => chunks.push(c))
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, output: Buffer.concat(chunks).toString('utf8') })
    })
  })
}

/** The venv's python, (re)installing when the SDK's pyproject.toml changed since the last install. */
async function ensureVenv(): Promise<string> {
  const python = path.join(VENV, 'bin', 'python')
  const wanted = createHash('sha256')
    .update(readFileSync(path.join(SDK, 'pyproject.toml')))
    .digest('hex')
  if (existsSync(python) && existsSync(MARKER) && readFileSync(MARKER, 'utf8').trim() === wanted)
    return python
  rmSync(VENV, { recursive: true, force: true })
  const system = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'
  const venv = await run(system, ['-m', 'venv', VENV], { timeoutMs: 120_000 })
  if (venv.code !== 0)
    throw new Error(`python3 -m venv failed (install python3-venv):\n${venv.output.slice(-2000)}`)
  const pip = await run(
    path.join(VENV, 'bin', 'pip'),
    ['install', '--quiet', '--disable-pip-version-check', '--editable', `${SDK}[dev]`],
    { timeoutMs: 600_000 },
  )
  if (pip.code !== 0) throw new Error(`pip install failed:\n${pip.output.slice(-3000)}`)
  writeFileSync(MARKER, `${wanted}\n`)
  return python
}

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
