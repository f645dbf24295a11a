/**
 * npx tsx bench/frustration-why.ts [SET ...] [--all]: each frustration error of the named development sets (all
 * of them with --all) over the replay store (bench/signals-replay.ts --score; never a blind set), with the message
 * the detector fired on or the end-user messages it passed over, and what each gate of detect.ts's frustration
 * read on each unit (the whole, then each sentence): the head, the anchors' margin, displeasure, and which gate
 * fires (sure, sureSentence, sureReply, plain, shouted; the message's louder word; the parting word on a failed
 * turn). For classing the errors by cause (issue 32, helper frust17). Measure only.
 */
import { parseArgs } from 'node:util'
import type { ConversationMessage } from '../services/analysis/src/signals/detect.ts'
import {
  DEFAULT_QUIET_PERIOD_MS,
  detectSignals,
  THRESHOLDS as T,
} from '../services/analysis/src/signals/detect.ts'
import { developmentTexts, loadReplayStore, type ScoredConversation } from './quality/signals-replay.ts'

const { values, positionals } = parseArgs({
  options: { all: { type: 'boolean', default: false }, ok: { type: 'boolean', default: false } },
  allowPositionals: true,
})
const store = loadReplayStore()
const texts = developmentTexts()

function detect(c: ScoredConversation) {
  const start = Date.UTC(2026, 0, 1)
  const messages: ConversationMessage[] = c.messages.map((m, i) => ({
    id: String(i),
    role: m.role,
    sentAt: new Date(start + i * 60_000),
    cues: m.cues,
    vector: m.vector === undefined ? undefined : Float32Array.from(m.vector),
  }))
  const now = new Date(start + c.messages.length * 60_000 + DEFAULT_QUIET_PERIOD_MS)
  return detectSignals(
    messages,
    { disabled: new Set(), custom: [], quietPeriodMs: DEFAULT_QUIET_PERIOD_MS },
    now,
  )
}

const f = (x: number | undefined) => (x === undefined ? '  –  ' : x.toFixed(2).padStart(5))

for (const c of store.conversations) {
  if (!values.all && !positionals.includes(c.set)) continue
  const found = detect(c).signals.find((s) => s.name === 'frustration')
  const labelled = c.labels.includes('frustration')
  if (labelled === (found !== undefined) && !values.ok) continue
  const kind = labelled ? (found ? 'ok+' : 'fn') : found ? 'fp' : 'ok-'
  const text = texts.get(`${c.set} ${c.id}`) ?? []
  console.log(
    `\n## ${c.set} ${c.id} ${kind} [${c.labels.join(', ')}] evidence ${found?.evidence.join(',') ?? '-'}`,
  )
  const firstUser = c.messages.findIndex((m) => m.role === 'user')
  for (const [i, m] of c.messages.entries()) {
    const t = (text[i]?.[1] ?? '').replace(/\s+/g, ' ')
    if (m.role === 'assistant') {
      console.log(`  A${i}: ${t.slice(0, 160)}`)
      continue
    }
    const cu = m.cues
    const reply = c.messages.slice(firstUser + 1, i).some((a) => a.role === 'assistant')
    const mark = found?.evidence.includes(String(i)) ? '*' : ' '
    console.log(
      `${mark} U${i}${reply ? 'r' : 'f'}: whole ${f(cu?.emotionFrustration)} margin ${f(cu?.frustration)} sad ${f(cu?.sadness)}${cu?.capitals ? ' CAPS' : ''}  ${t.slice(0, 220)}`,
    )
    for (const [k, u] of (cu?.frustrationUnits ?? []).entries()) {
      const gates: string[] = []
      const whole = cu?.frustrationUnits?.[0]?.head ?? 0
      if (
        k === 0 &&
        u.head >= T.frustrationSure &&
        (reply ||
          u.head >= T.frustrationSureFirst ||
          (u.displeasure ?? 1) >= T.frustrationSureFirstDispleasure)
      )
        gates.push('sure')
      if (
        k > 0 &&
        u.head >= T.frustrationSure &&
        whole >= T.frustrationSureSentenceWhole &&
        u.margin >= T.frustrationSureSentence &&
        (reply ||
          whole >= T.emotionFrustration ||
          (u.displeasure ?? 1) >= T.frustrationSureSentenceDispleasure)
      )
        gates.push('sureSentence')
      if (reply && u.head >= T.frustrationReplySure && u.margin >= T.frustrationReplySureMargin)
        gates.push('sureReply')
      if (
        u.head >= T.emotionFrustration &&
        u.margin >= (reply ? T.frustrationReply : T.frustrationFirst) &&
        (reply || (u.displeasure ?? 1) >= T.frustrationFirstDispleasure)
      )
        gates.push('plain')
      if (u.shouts && u.head >= T.frustrationShouted) gates.push('shouted')
      if (u.head >= T.frustrationParting) gates.push('(parting-head)')
      const esc = cu?.escalationUnits?.[k]?.head
      console.log(
        `      ${k === 0 ? 'whole' : `s${k}   `} head ${f(u.head)} margin ${f(u.margin)} displ ${f(u.displeasure)} esc ${f(esc)}${u.shouts ? ' SHOUTS' : ''} ${gates.join(' ')}`,
      )
    }
  }
}
