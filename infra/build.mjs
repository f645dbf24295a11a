// Bundles each service's main.ts into dist/<service>.js (ESM, Node 20). Our own workspaces (@cas/*) are
// TypeScript and go into the bundle; every other package stays an import from node_modules. Then builds
// the dashboard (services/web, Vite) into dist/web, which the query service and the all-in-one serve.
import { existsSync, readdirSync } from 'node:fs'
import { build } from 'esbuild'
import { build as buildWeb } from 'vite'

const services = readdirSync('services', { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(`services/${d.name}/src/main.ts`))
  .map((d) => d.name)

// A package's JSON file (stopwords-iso/stopwords-iso.json) goes into the bundle: esbuild writes an external
// import without its `with { type: 'json' }`, which Node refuses (ERR_IMPORT_ASSERTION_TYPE_MISSING).
const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@cas/') || args.path.endsWith('.json')
        ? undefined
        : { path: args.path, external: true },
    )
  },
}

await build({
  entryPoints: {
    ...Object.fromEntries(services.map((s) => [s, `services/${s}/src/main.ts`])),
    // The local analyzer's worker thread (services/analysis/src/providers/local-thread.ts loads it).
    'local-analyzer-worker': 'services/analysis/src/providers/local-analyzer-worker.ts',
    // The re-clustering's thread (services/analysis/src/topics/recluster-thread.ts loads it).
    'recluster-worker': 'services/analysis/src/topics/recluster-worker.ts',
    // The all-in-one's projector thread (services/projector/src/thread.ts loads it).
    'projector-worker': 'services/projector/src/projector-worker.ts',
  },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [externalPackages],
})
console.log(
  `built ${services.map((s) => `dist/${s}.js`).join(', ')}, dist/local-analyzer-worker.js, dist/recluster-worker.js, dist/projector-worker.js`,
)

await buildWeb({ configFile: 'services/web/vite.config.ts', logLevel: 'warn' })
console.log('built the dashboard into dist/web')
