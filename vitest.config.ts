import { configDefaults, defineConfig } from 'vitest/config'

/** The dashboard's browser tests: one file per page in test/dashboard/, and two for phones and long values. */
const BROWSER_TESTS = [
  'test/dashboard/*.test.ts',
  'test/dashboard-phone-browser.test.ts',
  'test/dashboard-long-values-browser.test.ts',
]

const common = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  pool: 'forks' as const,
  // A skipped test is a failure in CI (see .ci/run); nothing is allowed to be left .only either.
  allowOnly: false,
}

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...common,
          name: 'services',
          include: [
            'libs/**/*.test.ts',
            'services/**/*.test.ts',
            'test/**/*.test.ts',
            'infra/**/*.test.ts',
            'bench/**/*.test.ts',
            'sdks/**/*.test.ts',
          ],
          // The fault tests have their own command (npm run test:faults, vitest.faults.config.ts).
          exclude: [...configDefaults.exclude, 'test/faults/**', ...BROWSER_TESTS],
          globalSetup: ['test/support/global-setup.ts'],
          // Two cores: files run two at a time; each has its own database and topics.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // The dashboard in headless Chromium against `npm start` on a fresh data directory, started once for
        // all the browser files when the first asks (test/support/dashboard-global-setup.ts): it brings its
        // own Postgres (the embedded one). The files run one at a time, after the rest, so that a browser, a
        // build and a whole service never compete with the timing-sensitive Kafka and analysis tests, and
        // so that the one holding up the pipeline (conversations: freshness) holds up no other file.
        test: {
          ...common,
          name: 'browser',
          include: BROWSER_TESTS,
          globalSetup: ['test/support/dashboard-global-setup.ts'],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
})
