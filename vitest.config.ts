import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['libs/**/*.test.ts', 'services/**/*.test.ts', 'test/**/*.test.ts', 'infra/**/*.test.ts'],
    // The fault suite has its own command and config (vitest.faults.config.ts).
    exclude: [...configDefaults.exclude, 'test/faults/**'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: files run two at a time; each has its own database and topics.
    pool: 'forks',
    maxWorkers: 2,
    // A skipped test is a failure in CI (see .ci/run); nothing is allowed to be left .only either.
    allowOnly: false,
  },
})
