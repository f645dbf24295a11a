/**
 * npx tsx bench/frustration-edges-store.ts: over the replay store (bench/signals-replay.ts --score), the end-user
 * messages that restate a request after the bot missed (repetition's evidence), with the marks of a restatement
 * (asksAgain, askedBefore, contests, reasks) and their conversations' frustration labels and readings (helper frust14).
 */

import type { ConversationMessage } from '../services/analysis/src/signals/detect.ts'
import { DEFAULT_QUIET_PERIOD_MS, detectSignals } from '../services/analysis/src/signals/detect.ts'
import { developmentTexts, loadReplayStore, OLDER_HALF } from './quality/signals-replay.ts'

const store = loadReplayStore()
const texts = developmentTexts()
const f2 = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(2))
for (const c of store.conversations) {
  const start = Date.UTC(2026, 0, 1)
  const messages = c.messages.map((m, i) => ({
    id: String(i),
    role: m.role,
    sentAt: new Date(start + i * 60_000),
    cues: m.cues,
    vector: m.vector === undefined ? undefined : Float32Array.from(m.vector),
  })) as unknown as ConversationMessage[]
  const now = new Date(start + messages.length * 60_000 + DEFAULT_QUIET_PERIOD_MS)
  const { signals } = detectSignals(
    messages,
    { disabled: new Set(), custom: [], quietPeriodMs: DEFAULT_QUIET_PERIOD_MS },
    now,
  )
  const ev = (name: string) => new Set(signals.find((s) => s.name === name)?.evidence ?? [])
  const rep = ev('repetition')
  const fr = ev('frustration')
  const half = OLDER_HALF.has(c.set) ? 'older' : 'newer'
  const label = c.labels.includes('frustration') ? 'F' : '-'
  const t = texts.get(`${c.set} ${c.id}`)!
  for (const [i, m] of c.messages.entries()) {
    if (m.role !== 'user' || !rep.has(String(i))) continue
    // only the later of the pair: an earlier user request exists before with an assistant between
    const earlierUser = c.messages.slice(0, i).some((x) => x.role === 'user')
    if (!earlierUser) continue
    const q = m.cues!
    const marks = [q.asksAgain && 'asksAgain', q.askedBefore && 'askedBefore', q.contests && 'contests']
      .filter(Boolean)
      .join(',')
    const units = (q.frustrationUnits ?? []).map((u) => `${f2(u.head)}/${f2(u.margin)}`).join(' ')
    console.log(
      `${half} ${c.set} ${c.id} [${i}] label ${label} found ${fr.size > 0 ? 'F' : '-'}${fr.has(String(i)) ? '*' : ' '} marks ${marks || '-'} reasks ${f2(q.reasks)} ${units} ${JSON.stringify(t[i]![1]).slice(0, 140)}`,
    )
  }
}
