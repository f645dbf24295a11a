import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/**
 * Global setup of the fault suite: bundles the services into dist/<service>.js (`npm run build`, a couple
 * of seconds), which the tests run as processes: what is deployed, and quicker to restart than TypeScript
 * compiled on the fly, which matters for tests restarting processes dozens of times.
 */
export default function setup() {
  execFileSync(process.execPath, ['infra/build.mjs'], {
    cwd: fileURLToPath(new URL('../../../', import.meta.url)),
    stdio: ['ignore', 'ignore', 'inherit'],
  })
}
