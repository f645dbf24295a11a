import { defineConfig } from 'vitest/config'

/**
 * The fault suite (`npm run test:faults`): real service processes killed, brokers stopped, a Kafka
 * cluster losing its partition leader, Schemathesis against the running API. Slow by nature, so kept out
 * of `npm test`; CI runs both. One file at a time: each one loads the machine on its own.
 */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.fault.test.ts'],
    // Postgres, Kafka and Redis as for npm test; then the services bundled into dist/ for the processes.
    globalSetup: ['test/support/global-setup.ts', 'test/faults/support/build.ts'],
    testTimeout: 240_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    allowOnly: false,
  },
})
