import { PassThrough, type Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import type { FastifyRequest } from 'fastify'
import { AppError } from './errors.ts'

/** The body stream Fastify reads, and the compressed bytes it came from (compared with Content-Length). */
type DecodedBody = PassThrough & { receivedEncodedLength: number }

/**
 * A preParsing hook for routes that take compressed bodies (capture: SDKs gzip their batches). A body
 * with `Content-Encoding: gzip` (or its old alias `x-gzip`) is decompressed as it streams in; none or
 * `identity` is read as sent; any other encoding is 415 naming the ones supported.
 *
 * The route's body limit holds for the decompressed body (Fastify counts what this returns: 413 past it)
 * and for the compressed one (counted here: a stream of empty gzip members decompresses to nothing, for
 * ever). A zip bomb therefore costs at most the limit's worth of inflating before it is refused; what
 * was not read is then discarded as it comes, not inflated (unread-body.ts). A body that is not gzip is a 400.
 */
export async function decompressRequestBody(
  request: FastifyRequest,
  _reply: unknown,
  payload: Readable,
): Promise<Readable> {
  const header = request.headers['content-encoding']
  const encoding = header?.trim().toLowerCase()
  // An empty body is no body (request-body.ts), compressed or not: gzip would call it truncated.
  if (!encoding || encoding === 'identity' || request.headers['content-length'] === '0') return payload
  if (encoding !== 'gzip' && encoding !== 'x-gzip') {
    throw new AppError(
      'unsupported_media_type',
      `Content-Encoding ${header} is not supported: send the body uncompressed or with Content-Encoding: gzip.`,
    )
  }
  const limit = request.routeOptions.bodyLimit
  const gunzip = createGunzip()
  const body = new PassThrough() as DecodedBody
  body.receivedEncodedLength = 0
  // Fastify stops listening once it has refused a body (413); a failure after that must not be an
  // unhandled 'error' event.
  body.on('error', () => {})
  const count = (chunk: Buffer) => {
    body.receivedEncodedLength += chunk.length
    if (body.receivedEncodedLength > limit) {
      fail(new AppError('payload_too_large', `The request body is larger than ${limit} bytes compressed.`))
    }
  }
  let failed = false
  const fail = (error: AppError) => {
    if (failed) return
    failed = true
    payload.off('data', count)
    payload.unpipe(gunzip)
    gunzip.destroy()
    body.destroy(error)
  }
  payload.on('data', count)
  payload.on('error', () => fail(new AppError('invalid_request', 'The request body was not received whole.')))
  gunzip.on('error', () =>
    fail(new AppError('invalid_request', 'The request body is not valid gzip (Content-Encoding: gzip).')),
  )
  payload.pipe(gunzip).pipe(body)
  return body
}
