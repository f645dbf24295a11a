import { describe, expect, it } from 'vitest'
import { throttleClient } from './client-address.ts'

describe('throttleClient', () => {
  it('keeps an IPv4 address as it is: each address its own count', () => {
    expect(throttleClient('192.0.2.1')).toBe('192.0.2.1')
    expect(throttleClient('192.0.2.2')).toBe('192.0.2.2')
  })

  it('takes an IPv6 address by its /64, however it is written', () => {
    const prefix = '2001:db8:0:7::/64'
    for (const address of [
      '2001:db8:0:7::1',
      '2001:db8:0:7:ffff:ffff:ffff:ffff',
      '2001:0DB8:0000:0007:0000:0000:0000:0001',
      '2001:db8::7:1:2:3:4',
      '2001:db8:0:7::192.0.2.1',
      '2001:db8:0:7::1%eth0',
    ]) {
      expect(throttleClient(address), address).toBe(prefix)
    }
    expect(throttleClient('2001:db8:0:8::1')).toBe('2001:db8:0:8::/64')
    expect(throttleClient('::1')).toBe('0:0:0:0::/64')
    expect(throttleClient('fe80::1')).toBe('fe80:0:0:0::/64')
  })

  it("takes an IPv4-mapped IPv6 address (a dual-stack socket's) as its IPv4 address", () => {
    expect(throttleClient('::ffff:192.0.2.1')).toBe('192.0.2.1')
    expect(throttleClient('::ffff:c000:201')).toBe('192.0.2.1')
  })

  it('leaves what is not an address as it is', () => {
    expect(throttleClient('unknown')).toBe('unknown')
  })
})
