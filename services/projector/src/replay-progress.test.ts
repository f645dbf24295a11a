import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import type { RebuildProgress } from './rebuild.ts'
import { replayProgress } from './replay-progress.ts'

const PROGRESS: RebuildProgress = {
  applied: 12_000,
  eventsPerSecond: 3_000,
  lag: 6_000,
  etaSeconds: 2,
  phase: 'replaying',
}

/** A stream that keeps what is written to it, or fails every write as a closed terminal does (EIO). */
function output(isTTY: boolean, fails = false) {
  const written: string[] = []
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        if (fails) done(Object.assign(new Error('write EIO'), { code: 'EIO' }))
        else {
          written.push(chunk.toString())
          done()
        }
      },
    }),
    { isTTY },
  )
  return { stream, written }
}

describe("npm run replay's progress", () => {
  it('rewrites one line in place on a terminal, and ends it', () => {
    const { stream, written } = output(true)
    const progress = replayProgress(stream)
    progress.show(PROGRESS)
    progress.show({ ...PROGRESS, phase: 'done', lag: 0, etaSeconds: 0 })
    progress.end()
    expect(written).toEqual([
      '\r\x1b[2Kreplaying: 12,000 events applied, 3,000/s, lag 6,000, ETA 2s',
      '\r\x1b[2Kdone: 12,000 events applied, 3,000/s, lag 0, ETA 0s',
      '\n',
    ])
  })

  it('writes a line each time elsewhere (a pipe, a file)', () => {
    const { stream, written } = output(false)
    const progress = replayProgress(stream)
    progress.show({ ...PROGRESS, etaSeconds: null })
    progress.end()
    expect(written).toEqual(['replaying: 12,000 events applied, 3,000/s, lag 6,000, ETA ?\n'])
  })

  it('drops its lines once the terminal is gone (EIO), instead of an unhandled error that ends the CLI', async () => {
    // Regression (review7): after a hang-up the next progress line's EIO was an unhandled 'error' event, which
    // ended `npm run replay` while it was still stopping the embedded Postgres it had started.
    const { stream } = output(true, true)
    const progress = replayProgress(stream)
    progress.show(PROGRESS)
    await new Promise((resolve) => stream.once('close', resolve))
    progress.show(PROGRESS)
    progress.end()
    await new Promise((resolve) => setImmediate(resolve))
    expect(stream.destroyed).toBe(true)
    expect(stream.errored).toMatchObject({ code: 'EIO' })
  })
})
