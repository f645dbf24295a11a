import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestProject } from 'vitest/node'
import { clearScreenshots, findChromium } from './browser.ts'
import { type BuiltApp, buildApp, startBuiltApp } from './built-app.ts'
import { hasTestModel, modelConfigEnv, requireTestModel, UNREACHABLE_HUB } from './model.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * Where the browser test files ask for the built app they share (test/support/dashboard.ts); null
     * without Chromium.
     */
    dashboardAppUrl: string | null
  }
}

/** What a browser test file gets: the shared app's address and its embedded Postgres (as the app's superuser). */
export interface SharedApp {
  readonly baseUrl: string
  readonly databaseUrl: string
}

/**
 * The browser tests' one service: `npm run build`, then the built all-in-one on a fresh data directory (as
 * `npm start` runs it), shared by every browser test file of the run. Each file signs up an organization
 * of its own on it, so the files need no particular order; they run one at a time (vitest.config.ts), so
 * that one file holding up the pipeline (the freshness test) holds up no other.
 *
 * Vitest runs every project's global setup before any test, so the app is started when the first browser
 * file asks for it (GET on the URL provided as `dashboardAppUrl`), not while the other tests run.
 */
export default async function setup(project: TestProject) {
  const chromium = findChromium()
  if (!chromium && process.env.CI === 'true') {
    throw new Error('Chromium is required for the browser tests in CI (apt-get install chromium)')
  }
  if (!chromium) {
    console.warn(
      `\n${'!'.repeat(78)}\n!! Chromium not found: the dashboard's browser tests are SKIPPED. Install Debian's\n!! \`chromium\` package (or set CHROMIUM_PATH) to run them. CI never skips them.\n${'!'.repeat(78)}\n`,
    )
    project.provide('dashboardAppUrl', null)
    return
  }
  // The topics tests need the language model the app analyses with (../shared/models, never downloaded).
  requireTestModel()

  let app: Promise<BuiltApp> | undefined
  const start = async () => {
    await clearScreenshots()
    await buildApp()
    // The app analyses with the test model whatever the environment says, and never reaches for the hub.
    // Re-clustering (docs/analysis.md, Topics) runs seconds after a burst, not the default minute, so that the
    // topics test can wait for the topics to settle before it compares the page with the API.
    return startBuiltApp({
      ...(hasTestModel ? modelConfigEnv() : { ANALYSIS_MODEL_HUB_URL: UNREACHABLE_HUB }),
      TOPIC_RECLUSTER_MIN_INTERVAL_SECONDS: '2',
      TOPIC_RECLUSTER_MAX_INTERVAL_SECONDS: '5',
    })
  }
  const server = createServer((_req, res) => {
    app ??= start()
    app.then(
      (started) => {
        const shared: SharedApp = { baseUrl: started.baseUrl, databaseUrl: started.databaseUrl() }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(shared))
      },
      (err: unknown) => res.writeHead(500).end(String(err)),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  project.provide('dashboardAppUrl', `http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
  return async () => {
    server.close()
    await (await app?.catch(() => undefined))?.stop()
  }
}
