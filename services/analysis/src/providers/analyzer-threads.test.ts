import { readdirSync } from 'node:fs'
import { getPriority } from 'node:os'
import { UNDETERMINED_LANGUAGE } from '@cas/events'
import { describe, expect, it } from 'vitest'
import { AnalyzerError, type MessageToAnalyze } from '../analyzer.ts'
import { createThreadedLocalAnalyzer, startAnalyzerThreads } from './analyzer-threads.ts'
import { createLocalAnalyzer } from './local.ts'

const inThread = createLocalAnalyzer()
const threaded = await createThreadedLocalAnalyzer(2)

const messages: MessageToAnalyze[] = [
  'Thanks, that was really helpful!',
  'Your bot is useless and I hate it',
  'My refund for the broken umbrella has not arrived 😡',
  'How do I reset my password?',
  '',
].map((content, i) => ({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', content }))
const context = { topics: { billing: ['refund', 'invoice'], account: ['password'] } }

describe('local analyzer in worker threads', () => {
  it('gives the same results as in the calling thread, batches spread over the threads', async () => {
    const expected = await inThread.analyzeMessages(messages, context)
    const batches = await Promise.all(
      Array.from({ length: 8 }, () => threaded.analyzeMessages(messages, context)),
    )
    for (const results of batches) expect(results).toEqual(expected)
    expect(threaded.info).toEqual(inThread.info)
  })

  it("detects each end user's language in the thread, never an assistant's", async () => {
    const languages = (
      await threaded.analyzeMessages(
        [
          { id: 'es', role: 'user', content: 'Quiero cambiar la fecha de mi billete del viernes, por favor' },
          { id: 'de', role: 'user', content: 'Ich möchte meine Bestellung stornieren und das Geld zurück' },
          { id: 'bot', role: 'assistant', content: 'Claro, dime el localizador de tu reserva, por favor' },
          { id: 'short', role: 'user', content: 'ok' },
        ],
        {},
      )
    ).map((r) => [r.messageId, r.language])
    expect(languages).toEqual([
      ['es', 'es'],
      ['de', 'de'],
      ['bot', undefined],
      ['short', UNDETERMINED_LANGUAGE],
    ])
  })

  it("passes the analyzer's errors back with their code and retryability", async () => {
    const bad = [{ id: 'x', role: 'user', content: 42 }] as unknown as MessageToAnalyze[]
    const error = await threaded.analyzeMessages(bad, {}).catch((err: unknown) => err)
    expect(error).toBeInstanceOf(AnalyzerError)
    expect(error).toMatchObject({ code: 'invalid_input', retryable: false })
    // The thread is still there for the next batch.
    expect(await threaded.analyzeMessages(messages.slice(0, 1), {})).toHaveLength(1)
  })

  it("reports each thread's idle and active time, and its CPU time on Linux", async () => {
    const before = await threaded.threadStats!()
    expect(before).toHaveLength(2)
    await Promise.all(Array.from({ length: 8 }, () => threaded.analyzeMessages(messages, context)))
    const after = await threaded.threadStats!()
    for (const [i, stats] of after.entries()) {
      expect(stats.idleMs + stats.activeMs).toBeGreaterThan(before[i]!.idleMs + before[i]!.activeMs)
      if (process.platform === 'linux') {
        expect(stats.cpuMs).toBeGreaterThanOrEqual(before[i]!.cpuMs!)
        expect(stats.runQueueMs).toBeGreaterThanOrEqual(before[i]!.runQueueMs!)
      } else {
        expect(stats.cpuMs).toBeUndefined()
        expect(stats.runQueueMs).toBeUndefined()
      }
    }
    expect(after.some((s, i) => s.activeMs > before[i]!.activeMs)).toBe(true)
  })

  it('answers an aborted analysis with a retryable timeout', async () => {
    const controller = new AbortController()
    const pending = threaded.analyzeMessages(messages, {}, controller.signal)
    controller.abort()
    await expect(pending).rejects.toMatchObject({ code: 'timeout', retryable: true })
    controller.abort()
    await expect(threaded.analyzeMessages(messages, {}, controller.signal)).rejects.toBeInstanceOf(
      AnalyzerError,
    )
  })
})

describe("the analyzer threads' priority", () => {
  it.runIf(process.platform === 'linux')(
    'runs them, and only them, at the niceness asked for: analysis gives way to captures and projection',
    async () => {
      const niceThreads = () =>
        readdirSync('/proc/self/task').filter((tid) => getPriority(Number(tid)) === 13).length
      expect(niceThreads()).toBe(0)
      // The process's own priority, whatever niceness the test run was started with (CI may run under nice).
      const processPriority = getPriority(process.pid)
      const analyzer = await startAnalyzerThreads(2, { mode: 'lexical' }, 13)
      try {
        expect(niceThreads()).toBe(2)
        expect(getPriority(process.pid)).toBe(processPriority)
        expect(await analyzer.analyzeMessages(messages.slice(0, 1), {})).toHaveLength(1)
      } finally {
        await analyzer.close!()
      }
    },
  )
})
