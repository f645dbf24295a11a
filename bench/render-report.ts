/**
 * Renders bench/REPORT.md again from bench/report.json and the current bench/FINDINGS.md, without
 * measuring anything: for when the findings were written after the run.
 *
 *   npm run bench:render [-- DIR]   (default bench)
 */
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { formatWritten } from './support/format.ts'
import { renderReport } from './support/report.ts'
import type { BenchResults } from './support/results.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const dir = path.resolve(ROOT, process.argv[2] ?? 'bench')
const results = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8')) as BenchResults
const findings = await readFile(path.join(ROOT, 'bench/FINDINGS.md'), 'utf8')
await writeFile(path.join(dir, 'REPORT.md'), renderReport(results, findings))
await formatWritten([path.join(dir, 'REPORT.md')])
console.log(`wrote ${path.relative(ROOT, path.join(dir, 'REPORT.md'))}`)
