// Issue 19: test helpers sat in production paths (services/query/src/analytics/test-seed.ts imported
// test/support) and @cas/service-gateway exported ./retention for the tests alone.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { packageDirs, productionFiles, root } from './support/source-files.ts'

function importsOf(file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8')
  return [
    ...[
      ...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g),
      // Worker threads are loaded by URL.
      ...text.matchAll(/new URL\('(\.[^']+\.ts)', import\.meta\.url\)/g),
    ].map((m) => m[1] as string),
    // ... or by name, beside the module that starts them (startWorkerThread, libs/platform).
    ...[...text.matchAll(/startWorkerThread\(\s*'([\w-]+)',\s*import\.meta\.url/g)].map(
      (m) => `./${m[1]}.ts`,
    ),
  ]
}

/** The files of a package its entry points reach through relative imports. */
function reachable(dir: string, entries: readonly string[]): Set<string> {
  const seen = new Set<string>()
  const queue = entries.map((e) => path.join(dir, e))
  while (queue.length > 0) {
    const file = queue.pop()!
    if (seen.has(file)) continue
    seen.add(file)
    for (const spec of importsOf(file)) {
      if (spec.startsWith('.')) queue.push(path.join(path.dirname(file), spec))
    }
  }
  return seen
}

describe('production source', () => {
  it('never imports test code', () => {
    const offending = packageDirs.flatMap((dir) =>
      productionFiles(dir).flatMap((file) =>
        importsOf(file)
          .filter((spec) => spec === 'vitest' || /(^|\/)test(\/|$)|test-seed|test-support/.test(spec))
          .map((spec) => `${file} imports ${spec}`),
      ),
    )
    expect(offending).toEqual([])
  })

  it('holds only code its entry points use (test helpers live beside the tests, under test/)', () => {
    const unreachable = packageDirs.flatMap((dir) => {
      const manifest = JSON.parse(readFileSync(path.join(root, dir, 'package.json'), 'utf8'))
      const entries = [
        ...Object.values<string>(manifest.exports ?? {}),
        ...productionFiles(dir)
          .map((f) => path.relative(dir, f))
          .filter((f) => /^src\/(main|[\w-]+-cli)\.tsx?$/.test(f) || f === 'src/main.tsx'),
      ]
      const used = reachable(dir, entries)
      // An ambient declaration (`declare module 'x'`, a .d.ts) is used when a reachable file imports the module it
      // declares: the compiler finds it by the tsconfig's include, not by an import.
      const imported = new Set([...used].flatMap((f) => importsOf(f)))
      const declares = (f: string) =>
        [...readFileSync(path.join(root, f), 'utf8').matchAll(/declare module '([^']+)'/g)].map(
          (m) => m[1] as string,
        )
      return productionFiles(dir).filter(
        (f) => !used.has(f) && !(f.endsWith('.d.ts') && declares(f).some((m) => imported.has(m))),
      )
    })
    expect(unreachable).toEqual([])
  })

  it("has the analysis service read no table of another service's: it learns from the events it consumes", () => {
    const gatewayTables =
      /\b(?:FROM|JOIN)\s+(chatbots|chatbot_api_keys|capture_conversations|capture_message_ids|users|memberships)\b/i
    const reads = productionFiles('services/analysis').filter((file) =>
      gatewayTables.test(readFileSync(path.join(root, file), 'utf8')),
    )
    expect(reads).toEqual([])
  })

  it("has the query service read no table of another service's: only read models and published views", () => {
    // Issue 19: it read the gateway's chatbots (in its chatbot reads, the analytics' chatbot check and the
    // conversations' read-your-writes) and its audit_log.
    const gatewayTables =
      /\b(?:FROM|JOIN)\s+(chatbots|chatbot_api_keys|capture_conversations|capture_message_ids|capture_message_batches|users|memberships|invitations|audit_log)\b/i
    // libs/views held the chatbot reads it shared with the gateway; the sessions it reads through
    // libs/auth are authentication's, shared by every HTTP service, and not among these.
    const reads = ['services/query', 'libs/views']
      .flatMap(productionFiles)
      .filter((file) => gatewayTables.test(readFileSync(path.join(root, file), 'utf8')))
    expect(reads).toEqual([])
  })

  it('exports from each package only what code outside its tests imports', () => {
    const users = [...packageDirs.flatMap(productionFiles), ...benchFiles()]
    const unused: string[] = []
    for (const dir of packageDirs) {
      const manifest = JSON.parse(readFileSync(path.join(root, dir, 'package.json'), 'utf8'))
      for (const subpath of Object.keys(manifest.exports ?? {})) {
        if (subpath === '.') continue
        const specifier = `${manifest.name}${subpath.slice(1)}`
        if (!users.some((file) => importsOf(file).includes(specifier))) unused.push(specifier)
      }
    }
    expect(unused).toEqual([])
  })
})

/** The benchmarks use packages as production does (bench/run.ts rebuilds the read models). */
function benchFiles(): string[] {
  return readdirSync(path.join(root, 'bench'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => path.join('bench', f))
}
