import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'

const ROOT = path.resolve(import.meta.dirname, '../..')

/**
 * Formats files the benchmark wrote the way `npm run lint` checks them (Biome), so that a committed
 * report never fails CI's lint. A formatter that fails leaves the files as written, and says so.
 */
export async function formatWritten(files: readonly string[]): Promise<void> {
  try {
    await promisify(execFile)(path.join(ROOT, 'node_modules/.bin/biome'), ['format', '--write', ...files], {
      cwd: ROOT,
    })
  } catch (err) {
    console.warn(`could not format ${files.join(', ')} with Biome: ${(err as Error).message}`)
  }
}
