import { readdirSync } from 'node:fs'
import path from 'node:path'

/** The repository's root. */
export const root = path.resolve(import.meta.dirname, '..', '..')

/** Every package: the directories under libs/ and services/, relative to the root. */
export const packageDirs = ['libs', 'services'].flatMap((dir) =>
  readdirSync(path.join(root, dir)).map((name) => path.join(dir, name)),
)

/** The source files a package ships: everything under its src/ but its tests, relative to the root. */
export function productionFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f))
    .map((f) => path.join(dir, 'src', f))
}
