// Shared by the *.test.ts files of this package (beside their code in src/); not exported.
import { expect } from 'vitest'
import type { z } from 'zod'
import type { EventDefinition } from '../src/envelope.ts'
import { NO_CHATBOT_ID } from '../src/organization-events.ts'

export const fixtureIds = {
  event: '0194a1b3-0a1b-7c2d-8e3f-4a5b6c7d8e9f',
  org: '0194a1b0-1c2d-7e3f-a4b5-c6d7e8f9a0b1',
  chatbot: '0194a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b',
  conversation: '0194a1b2-d4e5-7f60-9b7c-8d9e0f1a2b3c',
} as const

/** A raw recorded event (as read from JSON) of `definition` with its example payload. */
export function rawEvent(definition: EventDefinition, overrides: Record<string, unknown> = {}) {
  return structuredClone({
    id: fixtureIds.event,
    type: definition.type,
    version: definition.version,
    occurredAt: '2025-01-15T09:30:03.250Z',
    orgId: fixtureIds.org,
    chatbotId: definition.streamType === 'organization' ? NO_CHATBOT_ID : fixtureIds.chatbot,
    streamId:
      definition.streamType === 'chatbot'
        ? fixtureIds.chatbot
        : definition.streamType === 'organization'
          ? fixtureIds.org
          : fixtureIds.conversation,
    streamVersion: 3,
    position: '9007199254740993',
    metadata: { correlationId: 'corr-1' },
    payload: definition.example as unknown,
    ...overrides,
  })
}

/** `rawEvent` with some payload fields replaced (`undefined` removes a field). */
export function rawEventWithPayload(definition: EventDefinition, payload: Record<string, unknown>) {
  const merged: Record<string, unknown> = { ...(definition.example as Record<string, unknown>), ...payload }
  for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key]
  return rawEvent(definition, { payload: merged })
}

export function expectAccepted(schema: z.ZodType, raw: unknown): void {
  const result = schema.safeParse(raw)
  expect(result.error?.issues ?? []).toEqual([])
}

/** Asserts the schema rejects `raw` with an issue at `path` (dot-separated). */
export function expectRejectedAt(schema: z.ZodType, raw: unknown, path: string): void {
  const result = schema.safeParse(raw)
  expect(result.success).toBe(false)
  expect(result.error?.issues.map((issue) => issue.path.map(String).join('.'))).toContain(path)
}
