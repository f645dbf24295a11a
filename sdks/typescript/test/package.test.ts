import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SDK = fileURLToPath(new URL('../', import.meta.url))
const pkg = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8'))
const sources = readdirSync(path.join(SDK, 'src'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: f, text: readFileSync(path.join(SDK, 'src', f), 'utf8') }))

describe('@conversation-analytics/sdk as published', () => {
  it('has no runtime dependencies and publishes its ESM build with its declarations', () => {
    expect(pkg.dependencies ?? {}).toEqual({})
    expect(pkg.peerDependencies ?? {}).toEqual({})
    expect(pkg.type).toBe('module')
    expect(pkg.exports['.']).toEqual({
      types: './dist/index.d.ts',
      import: './dist/index.js',
      default: './dist/index.js',
    })
    expect(pkg.files).toEqual(['dist', 'README.md'])
  })

  // Its Node.js globals are unknown to its own typecheck too (sdks/typescript/tsconfig.json: the DOM's
  // types, not Node's), so it reaches `process` only through globalThis, feature-detected (src/runtime.ts).
  it('imports only its own modules: nothing of Node.js, so that browsers and edge runtimes load it', () => {
    for (const { file, text } of sources) {
      const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!)
      expect(
        specifiers.filter((s) => !/^\.\/[\w.-]+\.js$/.test(s)),
        `${file} imports only ./<module>.js`,
      ).toEqual([])
    }
  })
})
