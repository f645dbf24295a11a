/**
 * npx tsx bench/escalation-causes.ts [--all]: every false escalation of the development sets (never a blind one) by
 * the path that fired it, from bench/.cache/signals-replay.json (signals-replay.ts --score): for each message the
 * detector names as evidence, the end user's head path (and whether signals-v65's margin past a complaint carried
 * it), the anchors' margin path, v26/v27's request taken up, v26's request after a failure, or the assistant's
 * handover; with the unit's readings and the message's text. --all lists the true escalations too (issue 32,
 * helper esc12).
 */
import { parseArgs } from 'node:util'
import type { MessageCues } from '../services/analysis/src/signals/cues.ts'
import {
  type ConversationMessage,
  DEFAULT_QUIET_PERIOD_MS,
  detectSignals,
  escalationAfterFailure,
  escalationAsked,
  escalationTakenUp,
  THRESHOLDS,
} from '../services/analysis/src/signals/detect.ts'
import { developmentTexts, loadReplayStore, OLDER_HALF } from './quality/signals-replay.ts'

const { values } = parseArgs({ options: { all: { type: 'boolean', default: false } } })
const store = loadReplayStore()
const texts = developmentTexts()
const t = THRESHOLDS

/** The paths of escalationAsked that read some unit of an end user's message, with the unit's readings. */
function askedPaths(c: MessageCues): string[] {
  const paths: string[] = []
  for (const [k, u] of (c.escalationUnits ?? []).entries()) {
    if (u.asksWhat === true) continue
    const byMargin = u.margin >= t.escalation && u.head >= t.escalationHeadVeto
    const headOk = u.head >= t.escalationHead && !(k > 0 && u.statement === true)
    const byHead = headOk && (u.pastComplaint ?? u.margin) >= t.escalationHeadMargin
    const byComplaint = byHead && u.margin < t.escalationHeadMargin
    const readings = `unit ${k} head ${u.head} margin ${u.margin}${u.pastComplaint === undefined ? '' : ` pastComplaint ${u.pastComplaint}`}`
    if (byMargin) paths.push(`margin (${readings})`)
    if (byComplaint) paths.push(`v65 complaint (${readings})`)
    else if (byHead) paths.push(`head (${readings})`)
  }
  return paths
}

const start = Date.UTC(2026, 0, 1)
for (const conversation of store.conversations) {
  const labelled = conversation.labels.includes('escalation')
  const messages: ConversationMessage[] = conversation.messages.map((m, i) => ({
    id: String(i),
    role: m.role,
    sentAt: new Date(start + i * 60_000),
    cues: m.cues,
    vector: m.vector === undefined ? undefined : Float32Array.from(m.vector),
  }))
  const now = new Date(start + messages.length * 60_000 + DEFAULT_QUIET_PERIOD_MS)
  const { signals } = detectSignals(
    messages,
    { disabled: new Set(), custom: [], quietPeriodMs: DEFAULT_QUIET_PERIOD_MS },
    now,
  )
  const escalation = signals.find((s) => s.name === 'escalation')
  if (escalation === undefined || (labelled && !values.all)) continue
  const half = OLDER_HALF.has(conversation.set) ? 'older' : 'newer'
  const text = texts.get(`${conversation.set} ${conversation.id}`)!
  console.log(
    `\n## ${half} ${conversation.set} ${conversation.id} ${labelled ? 'TRUE' : 'FALSE'} [${conversation.labels.join(',')}]`,
  )
  for (const id of escalation.evidence) {
    const i = Number(id)
    const m = messages[i]!
    const c = m.cues!
    const paths: string[] = []
    if (m.role === 'user') {
      if (escalationAsked(c) !== undefined) paths.push(...askedPaths(c))
      else {
        const later = messages.slice(i + 1).filter((a) => a.role === 'assistant')
        const taken = escalationTakenUp(c, later)
        if (taken !== undefined) {
          const asked = Math.max(...(c.escalationUnits ?? []).map((u) => u.head))
          paths.push(`v26/v27 taken up (asked head ${asked}, sum ${taken})`)
        } else if (escalationAfterFailure(c) !== undefined)
          paths.push(`v26 after failure (${escalationAfterFailure(c)})`)
      }
    } else {
      const units = (c.handoverUnits ?? []).map((u) => `h ${u.head}/m ${u.margin}`).join('; ')
      paths.push(`handover (${units})`)
    }
    console.log(
      `  [${i} ${m.role}] ${paths.join(' | ')}\n      ${JSON.stringify(text[i]?.[1]).slice(0, 300)}`,
    )
  }
}
