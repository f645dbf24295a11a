import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * How much of a body answered before it was read is still read (and discarded) after the answer: 4 times
 * the route's body limit (16 MiB for capture). A body just over the limit is the usual mistake (a batch
 * that grew); reading it to its end costs bandwidth only, nothing is kept. Reading without bound would let
 * any client, signed in or not, stream into the service for ever: past the bound the connection is closed.
 */
export const UNREAD_BODY_DRAIN_FACTOR = 4

/** How long the rest of such a body is waited for (nginx's `lingering_time`); then the connection is closed. */
export const UNREAD_BODY_DRAIN_MS = 30_000

/**
 * For an answer sent before the request's body was received in full (401, 413, 415, 429 are decided
 * first): keep reading the rest of the body, and discard it, so that the client can finish sending and
 * read the answer. Closing at once, as Fastify does after a refused body (`Connection: close`), left the
 * body's unread bytes in the socket: the kernel then resets the connection, and a client still writing
 * (Node's `fetch` does not wait for `100 Continue`) saw `EPIPE` or `ECONNRESET` instead of the answer,
 * about one time in four. nginx's lingering close and Go's server do the same, within bounds.
 *
 * A body declared longer than the bound (Content-Length) is not read: its answer closes the connection
 * (the client may then see the reset). Otherwise the connection stays open for the next request once the
 * body has ended, and is closed if more than the bound arrives or the body has not ended in
 * `drainMs` (UNREAD_BODY_DRAIN_MS). Call from an onSend hook, when `request.raw.complete` is false.
 */
export function drainUnreadBody(
  request: FastifyRequest,
  reply: FastifyReply,
  opts: { readonly bodyLimit: number; readonly drainMs: number },
): void {
  const raw = request.raw
  const socket = raw.socket
  const bound = UNREAD_BODY_DRAIN_FACTOR * (request.routeOptions.bodyLimit ?? opts.bodyLimit)
  if (Number(raw.headers['content-length']) > bound) {
    reply.header('connection', 'close')
    return
  }
  // Fastify's `Connection: close` after a refused body: the connection can carry on once the body has ended.
  reply.removeHeader('connection')
  let received = 0
  const stop = () => {
    clearTimeout(deadline)
    raw.off('data', count)
    raw.off('end', stop)
    raw.off('close', stop)
  }
  const close = () => {
    stop()
    socket.destroy()
  }
  const count = (chunk: Buffer) => {
    received += chunk.length
    if (received > bound) close()
  }
  const deadline = setTimeout(close, opts.drainMs)
  deadline.unref()
  raw.on('data', count)
  raw.once('end', stop)
  raw.once('close', stop)
  // The body may still be piped into a decompressor nobody reads any more (a body refused on its declared
  // length), whose backpressure would pause it again, or paused by one that gave up: unpipe, then read.
  raw.unpipe()
  raw.resume()
}
