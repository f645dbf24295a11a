import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'

const ROOT = path.resolve(import.meta.dirname, '../..')

/**
 * Formats files the benchmark wrote the way `npm run lint` checks them (Biome), so that a committed
 * report never fails CI's lint. A formatter that fails leaves the files as written, and says so.
 *
 * Through Biome's stdin, named by a path in the repository: given a path outside it (`--out /tmp/…`),
 * Biome 2 stops with an internal error.
 */
export async function formatWritten(files: readonly string[]): Promise<void> {
  for (const file of files) {
    try {
      const inside = path.relative(ROOT, path.resolve(file))
      const named =
        inside.startsWith('..') || path.isAbsolute(inside) ? `bench/${path.basename(file)}` : inside
      const formatted = await biomeFormat(await readFile(file, 'utf8'), named)
      await writeFile(file, formatted)
    } catch (err) {
      console.warn(`could not format ${file} with Biome: ${(err as Error).message}`)
    }
  }
}

function biomeFormat(text: string, stdinFilePath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      path.join(ROOT, 'node_modules/.bin/biome'),
      ['format', `--stdin-file-path=${stdinFilePath}`],
      { cwd: ROOT, maxBuffer: 64 << 20 },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    )
    child.stdin?.end(text)
  })
}
