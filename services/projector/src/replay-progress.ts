import type { RebuildProgress } from './rebuild.ts'

/**
 * How `npm run replay` shows a rebuild's progress on `out`: on a terminal one line rewritten in place, else a
 * line each time. What it cannot write is dropped, as console.log drops its lines: a terminal closed while the
 * rebuild runs (a hang-up, on which openCliInfrastructure leaves the embedded Postgres) fails every later write
 * with EIO, and that error, unhandled, ended the CLI at its next progress line, before it had stopped its server.
 */
export function replayProgress(out: NodeJS.WritableStream & { readonly isTTY?: boolean }) {
  const tty = out.isTTY === true
  out.on('error', () => {})
  return {
    show(p: RebuildProgress): void {
      const eta = p.etaSeconds === null ? '?' : `${p.etaSeconds}s`
      const line = `${p.phase}: ${p.applied.toLocaleString('en')} events applied, ${p.eventsPerSecond.toLocaleString('en')}/s, lag ${p.lag.toLocaleString('en')}, ETA ${eta}`
      out.write(tty ? `\r\x1b[2K${line}` : `${line}\n`)
    },
    /** Ends the line rewritten in place, before what is printed next. */
    end(): void {
      if (tty) out.write('\n')
    },
  }
}
