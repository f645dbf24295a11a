import type { z } from 'zod'

/**
 * An event that does not match its published schema. Never retryable: the same bytes fail the same
 * way, so a consumer dead-letters the event. Zod issues carry no input values, so the message is safe
 * to log even though payloads hold personal data.
 */
export class InvalidEventError extends Error {
  readonly code = 'invalid_event'
  readonly retryable = false
  readonly issues: readonly z.core.$ZodIssue[]

  constructor(issues: readonly z.core.$ZodIssue[], raw: unknown) {
    super(`invalid event${describeEvent(raw)}: ${issues.map(formatIssue).join('; ')}`)
    this.name = 'InvalidEventError'
    this.issues = issues
  }
}

function describeEvent(raw: unknown): string {
  if (typeof raw !== 'object' || raw === null) return ''
  const { id, type, version } = raw as Record<string, unknown>
  const parts = [
    typeof type === 'string' ? type : undefined,
    typeof version === 'number' ? `v${version}` : undefined,
    typeof id === 'string' ? `(id ${id})` : undefined,
  ].filter((part) => part !== undefined)
  return parts.length > 0 ? ` ${parts.join(' ')}` : ''
}

function formatIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join('.')
  return path ? `${path}: ${issue.message}` : issue.message
}
