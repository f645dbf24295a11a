import { describe, expect, it } from 'vitest'
import { expectAccepted, expectRejectedAt, rawEvent } from '../test/support.ts'
import { chatbotRenamedV1 } from './chatbot-events.ts'
import { eventEnvelopeSchema } from './envelope.ts'

const schema = eventEnvelopeSchema
const valid = () => rawEvent(chatbotRenamedV1)

describe('event envelope', () => {
  it('accepts a valid envelope with any type, version and payload', () => {
    expectAccepted(schema, valid())
    expectAccepted(schema, { ...valid(), type: 'some.future-type', version: 7, payload: [1, 2] })
  })

  it('keeps a position beyond 2^53 exactly, as a decimal string', () => {
    const parsed = schema.parse({ ...valid(), position: '18446744073709551615' })
    expect(BigInt(parsed.position)).toBe(2n ** 64n - 1n)
    expectAccepted(schema, { ...valid(), position: '0' })
  })

  it.each([
    ['a number', 42],
    ['negative', '-1'],
    ['a fraction', '1.5'],
    ['zero-padded', '007'],
    ['empty', ''],
    ['with spaces', ' 42'],
  ])('rejects a position that is %s', (_, position) => {
    expectRejectedAt(schema, { ...valid(), position }, 'position')
  })

  it.each([
    ['an offset', '2025-01-15T10:30:03+01:00'],
    ['no zone', '2025-01-15T09:30:03'],
    ['a date only', '2025-01-15'],
    ['an impossible date', '2025-02-30T09:30:03Z'],
    ['a number', 1736933403250],
  ])('rejects an occurredAt with %s', (_, occurredAt) => {
    expectRejectedAt(schema, { ...valid(), occurredAt }, 'occurredAt')
  })

  it.each(['id', 'orgId', 'chatbotId', 'streamId'])('rejects a %s that is not a UUID', (field) => {
    expectRejectedAt(schema, { ...valid(), [field]: 'chatbot-1' }, field)
  })

  it.each([0, 1.5, '1'])('rejects %j as version and as streamVersion', (value) => {
    expectRejectedAt(schema, { ...valid(), version: value }, 'version')
    expectRejectedAt(schema, { ...valid(), streamVersion: value }, 'streamVersion')
  })

  it.each([
    'id',
    'type',
    'version',
    'occurredAt',
    'orgId',
    'chatbotId',
    'streamId',
    'streamVersion',
    'position',
    'metadata',
  ])('requires %s', (field) => {
    const raw: Record<string, unknown> = valid()
    delete raw[field]
    expectRejectedAt(schema, raw, field)
  })

  it('keeps extra string metadata and rejects non-string metadata', () => {
    const metadata = { correlationId: 'c', causationId: 'e', requestId: 'r', traceparent: '00-abc-01' }
    expect(schema.parse({ ...valid(), metadata }).metadata).toEqual(metadata)
    expectRejectedAt(schema, { ...valid(), metadata: { correlationId: 7 } }, 'metadata.correlationId')
    expectRejectedAt(schema, { ...valid(), metadata: { attempt: 2 } }, 'metadata.attempt')
  })

  it('strips an envelope field it does not know, so adding one never breaks an old reader', () => {
    const parsed = schema.parse({ ...valid(), streamType: 'chatbot' })
    expect(parsed).not.toHaveProperty('streamType')
  })
})
