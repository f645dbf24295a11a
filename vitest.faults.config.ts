import { defineConfig } from 'vitest/config'

/**
 * The fault tests (issue 7): real processes killed or cut off under load, bounded in time. Slower than
 * `npm test`, so they have their own command, `npm run test:faults`, which CI runs after it.
 */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.fault.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One at a time: each one loads the machine on purpose.
    maxWorkers: 1,
    allowOnly: false,
  },
})
