import { isUtf8 } from 'node:buffer'
import { Readable } from 'node:stream'
import {
  errorCodes,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type RequestPayload,
  type RouteOptions,
} from 'fastify'
import { decompressRequestBody } from './content-encoding.ts'
import { AppError } from './errors.ts'
import { jsonPointer, MAX_BODY_DEPTH, pathDeeperThan } from './json-depth.ts'
import { notUtf8Error } from './utf8.ts'

/**
 * How every service reads request bodies (API.md: the API speaks JSON):
 * - `application/json` is parsed (prototype poisoning refused, as Fastify does) and may nest at most
 *   MAX_BODY_DEPTH levels; deeper is a 400 naming the path of the first value beyond.
 * - A JSON body must be UTF-8 (RFC 8259): one that is not is a 400, never decoded with U+FFFD in place of
 *   the bytes it could not read (that would store text other than what the client sent, in silence).
 * - An empty body is no body, whatever its content type: many clients send `Content-Type:
 *   application/json` on every request, also on those that take none (DELETE, rotate-key, logout).
 * - Any other content type with a body is 415.
 * - A route that takes a body and got none answers 400 saying that the body is missing (after its own
 *   preValidation hooks, e.g. a disabled sign-up's 403, which answer whatever the body).
 * Call before registering routes.
 */
export function installBodyParsing(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (body.length === 0) return done(null, undefined)
    const bytes = body as Buffer
    // One SIMD pass (simdutf); the decoding below then cannot meet a byte it would have to replace.
    if (!isUtf8(bytes)) return done(notUtf8Error(bytes), undefined)
    parseJson(request, bytes.toString('utf8'), (err, parsed) => {
      if (err) return done(err, undefined)
      const tooDeep = pathDeeperThan(parsed, MAX_BODY_DEPTH)
      if (tooDeep) return done(tooDeepError(jsonPointer(tooDeep)), undefined)
      done(null, parsed)
    })
  })
  app.addContentTypeParser('*', (request, payload, done) => {
    // Unknown routes answer 404 whatever they were sent, as Fastify does with no parser for the type.
    if (request.is404) return done(null, undefined)
    let settled = false
    const settle = (err: Error | null) => {
      if (settled) return
      settled = true
      done(err, undefined)
    }
    payload.on('data', (chunk: Buffer) => {
      if (chunk.length > 0) settle(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE())
    })
    payload.on('end', () => settle(null))
    payload.on('error', settle)
  })
  app.addHook('onRoute', (route: RouteOptions) => {
    // Only the routes that decompress (capture, OTLP) take a Content-Encoding; the others would parse the
    // compressed bytes as JSON and call them invalid JSON.
    const parsing = route.preParsing ? [route.preParsing].flat() : []
    if (!parsing.includes(decompressRequestBody)) route.preParsing = [refuseEncoding, ...parsing]
    if (!route.schema?.body) return
    const own = route.preValidation ? [route.preValidation].flat() : []
    route.preValidation = [...own, requireBody]
  })
}

/**
 * 415 for a body with a Content-Encoding on a route that does not decompress. An empty body is none, and
 * so is a request with neither Content-Length nor Transfer-Encoding (RFC 9112 §6.3: a GET or DELETE as
 * clients send them): nothing is there to decode. A chunked body (Transfer-Encoding, no length) is read up
 * to its first byte to tell: one that ends before any (a zero-length chunked body) is empty content, as
 * `Content-Length: 0` is (RFC 9110 §6.4: the framing is not the content), and is answered as body-less.
 */
async function refuseEncoding(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: RequestPayload,
): Promise<RequestPayload | undefined> {
  const header = request.headers['content-encoding']
  const encoding = header?.trim().toLowerCase()
  if (!encoding || encoding === 'identity') return undefined
  const length = request.headers['content-length']
  const chunked = length === undefined && request.headers['transfer-encoding'] !== undefined
  if (length === undefined ? !chunked : Number(length) === 0) return undefined
  // What was read of the stream is gone: the parsers are given an empty one in its place.
  if (chunked && (await endsEmpty(payload))) return Readable.from([])
  throw new AppError(
    'unsupported_media_type',
    `Content-Encoding ${header} is not taken by this route: send the body uncompressed.`,
  )
}

/** Whether the stream ends without a byte; it is read no further than its first non-empty chunk. */
function endsEmpty(payload: RequestPayload): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const settle = (empty: boolean) => {
      payload.off('data', onData).off('end', onEnd).off('error', onError)
      if (!empty) payload.pause()
      resolve(empty)
    }
    const onData = (chunk: Buffer) => chunk.length > 0 && settle(false)
    const onEnd = () => settle(true)
    const onError = (err: Error) => {
      payload.off('data', onData).off('end', onEnd).off('error', onError)
      reject(err)
    }
    payload.on('data', onData).on('end', onEnd).on('error', onError)
  })
}

async function requireBody(request: { body: unknown }): Promise<void> {
  if (request.body === undefined) {
    throw new AppError(
      'invalid_request',
      'The request body is missing: this endpoint takes a JSON body (Content-Type: application/json).',
      [{ path: '/', message: 'required', in: 'body' }],
    )
  }
}

function tooDeepError(path: string): AppError {
  return new AppError(
    'invalid_request',
    `The request body nests deeper than ${MAX_BODY_DEPTH} levels of objects and arrays.`,
    [{ path, message: `nested deeper than ${MAX_BODY_DEPTH} levels`, in: 'body' }],
  )
}
