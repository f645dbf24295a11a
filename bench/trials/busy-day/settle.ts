/** busy-day.ts settle: polls the topics' re-clustering and the status until settled, and a while after. */
import os from 'node:os'
import { api, readState, sleep } from './state.ts'

export interface SettleOptions {
  readonly state: string
  readonly days: string
  readonly interval: string
  readonly 'after-settled': string
}

type TopicsAnswer = {
  topics: { id: string; label: string; conversations: number }[]
  reclustering: { settling: boolean; lastReclusteredAt: string | null; retrying: unknown }
}

export async function settle(opts: SettleOptions): Promise<void> {
  const state = await readState(opts.state)
  const q = `chatbotId=${state.chatbotId}&days=${opts.days}`
  const interval = Number(opts.interval) * 1000
  let settledAt: number | null = null
  let settledPrint: string | null = null
  for (;;) {
    // Every topic (the API's most, 1,000), so that a change beyond the first page shows too.
    const topics = await api<TopicsAnswer>(state, `/api/v1/analytics/topics?${q}&limit=1000`)
    const status = await api<{
      projection: { state: string; behindSeconds: number | null }
      analysis: { state: string; behindSeconds: number | null }
    }>(state, '/api/v1/status')
    const print = topics.topics.map((t) => `${t.id}:${t.label}:${t.conversations}`).join('|')
    const { settling, lastReclusteredAt, retrying } = topics.reclustering
    const changed = settledPrint !== null && print !== settledPrint
    console.log(
      [
        new Date().toISOString(),
        `load ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
        `projection ${status.projection.state} ${status.projection.behindSeconds}s`,
        `analysis ${status.analysis.state} ${status.analysis.behindSeconds}s`,
        `settling ${settling}`,
        `last reclustered ${lastReclusteredAt}`,
        `retrying ${JSON.stringify(retrying)}`,
        `topics ${topics.topics.length}`,
        settledPrint === null ? '' : `changed since settled: ${changed}`,
      ].join('; '),
    )
    if (!settling && status.analysis.state === 'up-to-date' && settledAt === null) {
      settledAt = Date.now()
      settledPrint = print
      console.log(`settled (first read): ${new Date(settledAt).toISOString()}`)
    }
    if (settledAt !== null && Date.now() - settledAt >= Number(opts['after-settled']) * 1000) return
    await sleep(interval)
  }
}
