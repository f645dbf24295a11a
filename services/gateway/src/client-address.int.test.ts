import { randomInt, randomUUID } from 'node:crypto'
import type { InjectOptions } from 'fastify'
import { describe, expect, inject, it } from 'vitest'
import { captureBody } from '../../../test/support/chatbots.ts'
import { useTestGateways } from '../../../test/support/gateway.ts'

// Regression (mend2 left it): @fastify/rate-limit keyed its per-address limits by the full address, so one
// IPv6 /64, which a single client is given and picks addresses in at will, had a budget per address.
const { gateway } = useTestGateways({ env: { UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '2' } })

/** The routes with a per-client-address limit, each as a request that the limit alone would refuse. */
const limitedRoutes: Record<string, () => InjectOptions> = {
  'sign-in': () => ({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { email: `nobody-${randomUUID()}@example.com`, password: 'not the password' },
  }),
  'capture without a valid key': () => ({
    method: 'POST',
    url: '/api/v1/capture',
    headers: { authorization: `Bearer svc_live_${'9'.repeat(32)}` },
    payload: captureBody('keyless', 1),
  }),
  'invitation links': () => ({
    method: 'POST',
    url: '/api/v1/invitations/lookup',
    payload: { token: 'x'.repeat(43) },
  }),
}

/** A /64 of the documentation prefix no other test (nor an earlier run, in a shared Redis) counts on. */
const randomPrefix = () => `2001:db8:${randomInt(0x10000).toString(16)}:${randomInt(0x10000).toString(16)}`
const randomIPv4 = () => `198.51.${randomInt(256)}.${randomInt(1, 255)}`

const redisUrl = inject('redisUrl')
const stores: [string, Record<string, string>][] = [
  ['in memory', {}],
  ...(redisUrl
    ? [['in Redis (REDIS_URL)', { REDIS_URL: redisUrl }] as [string, Record<string, string>]]
    : []),
]

describe.each(stores)('per-address rate limits, counters %s', (_store, env) => {
  it.each(Object.keys(limitedRoutes))('count an IPv6 /64 as one client: %s', async (route) => {
    // Given a limit of 2 requests a minute per client, used up by two addresses of one /64
    const app = await gateway(env)
    const request = limitedRoutes[route]!
    const send = (remoteAddress: string) => app.inject({ ...request(), remoteAddress })
    const prefix = randomPrefix()
    for (const address of [`${prefix}::a`, `${prefix}::b`]) {
      expect((await send(address)).statusCode, address).not.toBe(429)
    }

    // When a third address of that /64 sends one more
    const third = await send(`${prefix}:9a3f:11ff:fe00:42`)

    // Then it is refused as the same client, while an address of another /64 is not
    expect(third.statusCode).toBe(429)
    expect(third.json().error.code).toBe('rate_limited')
    expect((await send(`${randomPrefix()}::a`)).statusCode).not.toBe(429)
  })

  it.each(Object.keys(limitedRoutes))(
    'count IPv4 per address, an IPv4-mapped IPv6 address as its IPv4: %s',
    async (route) => {
      // Given an IPv4 client whose two requests came through a dual-stack socket
      const app = await gateway(env)
      const request = limitedRoutes[route]!
      const send = (remoteAddress: string) => app.inject({ ...request(), remoteAddress })
      const address = randomIPv4()
      for (let i = 0; i < 2; i++) expect((await send(`::ffff:${address}`)).statusCode).not.toBe(429)

      // Then its next request over IPv4 is over the limit, and its neighbour's is not
      expect((await send(address)).statusCode).toBe(429)
      const [a, b, c, d] = address.split('.').map(Number)
      expect((await send(`${a}.${b}.${c}.${(d! % 254) + 1}`)).statusCode).not.toBe(429)
    },
  )
})
