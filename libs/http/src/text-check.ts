import type { FastifyInstance } from 'fastify'
import { AppError } from './errors.ts'

/**
 * Postgres text and jsonb cannot hold U+0000, which JSON, query strings and paths can carry: a request
 * with one anywhere (a value or an object key, in the body, the query string or the path) is refused with
 * a 400 naming where, before any handler could fail on it in the database with a 500.
 */
export function refuseNulCharacters(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const parts = [
      ['body', request.body],
      ['querystring', request.query],
      ['params', request.params],
    ] as const
    for (const [part, value] of parts) {
      const path = findNul(value)
      if (path !== undefined) {
        throw new AppError('invalid_request', 'Text must not contain the NUL character (U+0000).', [
          { path, message: 'contains U+0000', in: part },
        ])
      }
    }
  })
}

/**
 * The JSON Pointer of the first string or key holding U+0000, or undefined. Iterative: bodies nest deep.
 * Nearly every request has none: a first pass looks without building paths, and only a hit walks again
 * to say where.
 */
function findNul(root: unknown): string | undefined {
  return hasNul(root) ? nulPath(root) : undefined
}

function hasNul(root: unknown): boolean {
  const stack: unknown[] = [root]
  while (stack.length > 0) {
    const value = stack.pop()
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return true
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push(item)
    } else if (value !== null && typeof value === 'object') {
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue
        if (key.includes('\u0000')) return true
        stack.push((value as Record<string, unknown>)[key])
      }
    }
  }
  return false
}

function nulPath(root: unknown): string | undefined {
  const stack: [unknown, string][] = [[root, '']]
  while (stack.length > 0) {
    const [value, path] = stack.pop()!
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return path || '/'
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}/${i}`])
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        const itemPath = `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`
        if (key.includes('\u0000')) return itemPath
        stack.push([item, itemPath])
      }
    }
  }
  return undefined
}
