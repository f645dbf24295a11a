import { describe, expect, it } from 'vitest'
import {
  customFieldWarnings,
  EMPTY_METADATA,
  incomingMetadata,
  mergeMetadata,
  sameMetadata,
} from './metadata.ts'

const body = { conversationId: 'c', messages: [{ id: 'm', role: 'user' as const, content: '' }] }

describe('capture metadata', () => {
  it('folds deprecated userId into user.id only when user.id is absent', () => {
    expect(incomingMetadata({ ...body, userId: 'u1' }).metadata.user).toEqual({ id: 'u1' })
    expect(incomingMetadata({ ...body, userId: 'u1', user: { id: 'u2' } }).metadata.user).toEqual({
      id: 'u2',
    })
    expect(incomingMetadata({ ...body, userId: 'u1' }).deprecated).toBe(true)
    expect(incomingMetadata(body).deprecated).toBe(false)
  })

  it('merges deprecated metadata under custom, custom winning', () => {
    const { metadata, deprecated } = incomingMetadata({
      ...body,
      metadata: { a: 1, b: 'x' },
      custom: { b: 'y' },
    })
    expect(metadata.custom).toEqual({ a: 1, b: 'y' })
    expect(deprecated).toBe(true)
  })

  it('replaces only the fields a later capture carries', () => {
    const stored = { ...EMPTY_METADATA, user: { id: 'u', plan: 'free' }, custom: { a: 1 } }
    const merged = mergeMetadata(stored, {
      ...EMPTY_METADATA,
      user: { plan: 'pro' },
      session: { device: 'ios' },
    })
    expect(merged).toEqual({
      user: { id: 'u', plan: 'pro' },
      organization: {},
      session: { device: 'ios' },
      custom: { a: 1 },
    })
    expect(sameMetadata(stored, mergeMetadata(stored, EMPTY_METADATA))).toBe(true)
    expect(sameMetadata(stored, merged)).toBe(false)
  })

  it('compares metadata regardless of key order', () => {
    const a = { ...EMPTY_METADATA, custom: { x: 1, y: 2 } }
    const b = { ...EMPTY_METADATA, custom: { y: 2, x: 1 } }
    expect(sameMetadata(a, b)).toBe(true)
  })

  it('warns in the exact API.md wording', () => {
    expect(
      customFieldWarnings({ plan: 'pro', seats: '3', vip: true }, { seats: 'number', vip: 'boolean' }),
    ).toEqual(['custom field plan is not in the schema', 'custom field seats should be number'])
    expect(customFieldWarnings({ a: 1 }, {})).toEqual(['custom field a is not in the schema'])
  })
})
