import type { CustomFieldType } from '@cas/settings'
import type { CaptureBody } from './schema.ts'

type Primitive = string | number | boolean
type Flat = Record<string, Primitive>

/** The four metadata objects of a conversation, as stored and as carried by its events. */
export interface ConversationMetadata {
  readonly user: Flat
  readonly organization: Flat
  readonly session: Flat
  readonly custom: Flat
}

export const EMPTY_METADATA: ConversationMetadata = { user: {}, organization: {}, session: {}, custom: {} }

/**
 * The metadata a capture carries, with the deprecated fields folded in: `userId` fills `user.id` when
 * absent, `metadata` merges under `custom` (custom wins). When both of a pair are given and disagree, the
 * value dropped is said in a warning: the caller's integration sends two sources of truth.
 */
export function incomingMetadata(body: CaptureBody): {
  metadata: ConversationMetadata
  deprecated: boolean
  warnings: string[]
} {
  const warnings: string[] = []
  const user = { ...(body.user as Flat | undefined) }
  if (body.userId !== undefined) {
    if (user.id === undefined) user.id = body.userId
    else if (user.id !== body.userId) warnings.push('userId and user.id differ; user.id was kept')
  }
  if (body.metadata && body.custom) {
    for (const [name, value] of Object.entries(body.metadata)) {
      if (Object.hasOwn(body.custom, name) && body.custom[name] !== value) {
        warnings.push(`metadata.${name} and custom.${name} differ; custom.${name} was kept`)
      }
    }
  }
  return {
    metadata: {
      user,
      organization: { ...(body.organization as Flat | undefined) },
      session: { ...(body.session as Flat | undefined) },
      custom: { ...body.metadata, ...body.custom },
    },
    deprecated: body.userId !== undefined || body.metadata !== undefined,
    warnings,
  }
}

/** Later captures replace the fields they carry: a shallow merge per object. */
export function mergeMetadata(
  stored: ConversationMetadata,
  incoming: ConversationMetadata,
): ConversationMetadata {
  return {
    user: { ...stored.user, ...incoming.user },
    organization: { ...stored.organization, ...incoming.organization },
    session: { ...stored.session, ...incoming.session },
    custom: { ...stored.custom, ...incoming.custom },
  }
}

export function sameMetadata(a: ConversationMetadata, b: ConversationMetadata): boolean {
  const flat = (m: Flat) => JSON.stringify(Object.entries(m).sort(([x], [y]) => (x < y ? -1 : 1)))
  return (['user', 'organization', 'session', 'custom'] as const).every((k) => flat(a[k]) === flat(b[k]))
}

/** API.md warnings for custom fields missing from the chatbot's schema or of the wrong type. */
export function customFieldWarnings(
  custom: Flat,
  schema: Readonly<Record<string, CustomFieldType>>,
): string[] {
  return Object.entries(custom).flatMap(([name, value]) => {
    const expected = schema[name]
    if (expected === undefined) return [`custom field ${name} is not in the schema`]
    return typeof value === expected ? [] : [`custom field ${name} should be ${expected}`]
  })
}
