/**
 * What the SDK uses of its runtime, detected rather than assumed: it runs on Node.js 20+, in browsers and
 * on edge runtimes (Cloudflare Workers, Vercel Edge, Deno, Bun), and imports no module of any of them.
 */

/** A random UUID: crypto.randomUUID where there is one (it needs a secure context in browsers). */
export function randomId(): string {
  const webCrypto = globalThis.crypto
  if (typeof webCrypto?.randomUUID === 'function') return webCrypto.randomUUID()
  const bytes = new Uint8Array(16)
  if (typeof webCrypto?.getRandomValues === 'function') webCrypto.getRandomValues(bytes)
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256)
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** `body` gzip-compressed with CompressionStream, or undefined where the runtime has none. */
export async function gzip(body: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer> | undefined> {
  if (typeof CompressionStream !== 'function') return undefined
  try {
    const stream = new Blob([body]).stream().pipeThrough(new CompressionStream('gzip'))
    return new Uint8Array(await new Response(stream).arrayBuffer())
  } catch {
    return undefined
  }
}

/** A timer that does not keep a Node.js process alive (browsers' timers are numbers, without unref). */
export function unrefTimer(timer: unknown): void {
  if (typeof timer === 'object' && timer !== null && 'unref' in timer && typeof timer.unref === 'function')
    timer.unref()
}

/** Resolves after `ms`, or at once when `signal` aborts. This timer keeps a Node.js process alive. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done)
  })
}

/** A signal that aborts when either does (AbortSignal.any where there is one). */
export function eitherSignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([a, b])
  const controller = new AbortController()
  const abort = () => controller.abort()
  if (a.aborted || b.aborted) abort()
  a.addEventListener('abort', abort)
  b.addEventListener('abort', abort)
  return controller.signal
}

/** A signal aborting after `ms` (AbortSignal.timeout where there is one). */
export function timeoutSignal(ms: number): AbortSignal {
  if (typeof AbortSignal.timeout === 'function') return AbortSignal.timeout(ms)
  const controller = new AbortController()
  unrefTimer(setTimeout(() => controller.abort(), ms))
  return controller.signal
}

/**
 * Retry-After in milliseconds: delay-seconds or an HTTP date; undefined when absent or unreadable.
 * At most an hour, whatever it says.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined
  const value = header.trim()
  let ms: number
  if (/^\d+(\.\d+)?$/.test(value)) ms = Number(value) * 1000
  else {
    const at = Date.parse(value)
    if (Number.isNaN(at)) return undefined
    ms = at - now
  }
  return Math.min(Math.max(ms, 0), 3_600_000)
}

/** The Node.js process, when this is Node.js (or a runtime with its process events); else undefined. */
export interface ProcessLike {
  on(event: string, listener: (...args: unknown[]) => void): unknown
  off(event: string, listener: (...args: unknown[]) => void): unknown
  listenerCount(event: string): number
  kill(pid: number, signal?: string): unknown
  readonly pid: number
}

export function nodeProcess(): ProcessLike | undefined {
  const candidate = (globalThis as { process?: Partial<ProcessLike> }).process
  if (
    candidate &&
    typeof candidate.on === 'function' &&
    typeof candidate.off === 'function' &&
    typeof candidate.listenerCount === 'function' &&
    typeof candidate.kill === 'function' &&
    typeof candidate.pid === 'number'
  )
    return candidate as ProcessLike
  return undefined
}
