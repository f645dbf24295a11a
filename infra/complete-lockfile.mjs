// The npm registry mirror on our machines serves only some platforms' builds of a few packages (Biome's
// native CLIs), so `npm install` leaves their entries out of package-lock.json and `npm ci` then refuses
// the lock file as out of sync. This adds the missing entries of optional platform packages: version,
// os/cpu/libc (read off the package name), optional, no tarball. npm skips them on other platforms and
// fetches them by version on theirs. Run after `npm install` changes the lock file: `npm run lockfile`.
import { readFileSync, writeFileSync } from 'node:fs'

const LOCK = 'package-lock.json'
const PLATFORM_PACKAGE = /-(android|darwin|linux|win32|freebsd|openbsd|netbsd|sunos|aix)-([a-z0-9]+)(-musl)?$/
const lock = JSON.parse(readFileSync(LOCK, 'utf8'))
const added = []
for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const match = name.match(PLATFORM_PACKAGE)
    const target = `${location ? `${location}/` : ''}node_modules/${name}`
    if (!match || lock.packages[target] || lock.packages[`node_modules/${name}`]) continue
    const [, os, cpu, musl] = match
    lock.packages[target] = {
      version,
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(os === 'linux' ? { libc: [musl ? 'musl' : 'glibc'] } : {}),
      ...(entry.license ? { license: entry.license } : {}),
      optional: true,
      os: [os],
    }
    added.push(`${name}@${version}`)
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
)
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`)
console.log(added.length ? `added ${added.join(', ')}` : 'lock file complete')
