import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'

/**
 * The page may load scripts, styles, images and data from this origin only, and nobody may frame it:
 * injected markup can neither run code nor send data elsewhere, and clickjacking is ruled out.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** Vite names everything under assets/ by its content hash: a changed file is a new URL. */
const IMMUTABLE = 'public, max-age=31536000, immutable'
/** index.html and unhashed files: the browser revalidates (ETag) each time, so a deploy shows at once. */
const REVALIDATE = 'no-cache'

/**
 * Serves the built dashboard (services/web, built into dist/web by `npm run build`) at the base URL:
 * its files, and index.html for every other GET of a page path, so that /chatbots/… links and reloads
 * land in the app, which routes in the browser. /api/…, and paths that name a file (they have an
 * extension), keep the API's JSON 404 when nothing matches.
 */
export async function registerDashboard(app: FastifyInstance, opts: { root: string }): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(fastifyStatic, {
      root: opts.root,
      // No routes of its own: the files are looked up per request (below), so a build made while the
      // service runs serves its new assets beside its new index.html (routes made at start knew only the
      // files of the build present then, and the new index.html named assets they answered 404).
      serve: false,
      index: false,
      cacheControl: false,
      setHeaders: (reply, file) => {
        const relative = path.relative(opts.root, file).split(path.sep)
        reply.header('cache-control', relative[0] === 'assets' ? IMMUTABLE : REVALIDATE)
        reply.header('x-content-type-options', 'nosniff')
        if (file.endsWith('.html')) {
          reply.header('content-security-policy', DASHBOARD_CSP)
          reply.header('x-frame-options', 'DENY')
          reply.header('referrer-policy', 'same-origin')
        }
      },
    })
    const page = { schema: { hide: true } }
    scope.get('/', page, (_request, reply) => reply.sendFile('index.html'))
    scope.get('/*', page, (request, reply) => {
      if (isPagePath(request.url)) return reply.sendFile('index.html')
      const file = builtFilePath(request.url)
      return file === undefined ? reply.callNotFound() : reply.sendFile(file)
    })
  })
}

/**
 * The file a URL names inside the build, relative to it, or undefined when it cannot be one of the build's
 * files: every segment a plain file or directory name (Vite's names are letters, digits, `-`, `_` and
 * dots), none empty, hidden, `.` or `..`, no escape that decodes to `/`, `\` or NUL. Nothing outside the
 * build is reachable, whatever the encoding (and `send` refuses `..` again).
 */
export function builtFilePath(url: string): string | undefined {
  const encoded = url.split(/[?#]/, 1)[0] ?? ''
  let pathname: string
  try {
    pathname = decodeURIComponent(encoded)
  } catch {
    return undefined
  }
  const segments = pathname.split('/').slice(1)
  const plain = segments.every((s) => /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(s))
  return segments.length > 0 && plain ? segments.join('/') : undefined
}

/** A path the app routes in the browser: not the API's, and not one naming a file (no extension). */
export function isPagePath(url: string): boolean {
  const pathname = url.split(/[?#]/, 1)[0] ?? ''
  if (pathname === '/api' || pathname.startsWith('/api/')) return false
  const last = pathname.slice(pathname.lastIndexOf('/') + 1)
  return !last.includes('.')
}

/**
 * Where the built dashboard is for a bundle in dist/ (`import.meta.url` of dist/<service>.js): dist/web.
 * Undefined when it has not been built there (a service run from source), after saying so.
 */
export function builtDashboardDir(bundleUrl: string, warn: (msg: string) => void): string | undefined {
  const dir = fileURLToPath(new URL('./web/', bundleUrl))
  if (existsSync(path.join(dir, 'index.html'))) return dir
  warn(`the dashboard is not built (no ${path.join(dir, 'index.html')}): run \`npm run build\``)
  return undefined
}
