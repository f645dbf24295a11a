import type { PipelineStatus, StageFreshness } from '../api/types.ts'

export type FreshnessTone = 'current' | 'behind' | 'unknown'

/**
 * How far behind, in coarse steps: "5 s", "15 s" (5-second steps under a minute), "4 min", "2 h",
 * "3 days". The line is a live region: coarse steps keep a screen reader from being told every tick.
 */
export function formatLag(seconds: number): string {
  if (seconds < 5) return `${Math.floor(seconds)} s`
  if (seconds < 60) return `${Math.floor(seconds / 5) * 5} s`
  if (seconds < 3_600) return `${Math.floor(seconds / 60)} min`
  if (seconds < 48 * 3_600) return `${Math.floor(seconds / 3_600)} h`
  return `${Math.floor(seconds / 86_400)} days`
}

/** What the stage is called beside the figures: the read models are what lists and counts show. */
const STAGES = [
  ['projection', 'Conversations'],
  ['analysis', 'Analysis'],
] as const

function describeStage(name: string, stage: StageFreshness): string | undefined {
  if (stage.state === 'behind' && stage.behindSeconds !== null)
    return `${name} ${formatLag(stage.behindSeconds)} behind`
  if (stage.state === 'unknown') return `${name} status unknown`
  return undefined
}

/**
 * The line beside the figures: "Up to date", or what is behind and by how much ("Analysis 4 min behind",
 * "Conversations 10 s behind · Analysis 4 min behind"), or which stage has stopped reporting.
 */
export function describeFreshness(status: PipelineStatus): { tone: FreshnessTone; text: string } {
  const parts = STAGES.map(([key, name]) => describeStage(name, status[key])).filter(
    (part): part is string => part !== undefined,
  )
  if (parts.length === 0) return { tone: 'current', text: 'Up to date' }
  const behind = STAGES.some(([key]) => status[key].state === 'behind')
  return { tone: behind ? 'behind' : 'unknown', text: parts.join(' · ') }
}
