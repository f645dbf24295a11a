import { isIPv6 } from 'node:net'

/**
 * The client whose requests are counted together, by the sign-in lockout and by every per-address rate
 * limit: an IPv4 address itself; for IPv6, the address's /64 (`2001:db8:0:7::/64`). One IPv6 subscriber
 * or host is routinely given a whole /64 (RFC 6177) and picks addresses in it at will (RFC 8981, temporary
 * addresses), so counting per full IPv6 address gave one client as many budgets as it cared to use. An
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, a dual-stack socket's) is its IPv4 address; a zone
 * (`%eth0`) is dropped. `request.ip` is the socket's address, or X-Forwarded-For's under TRUST_PROXY.
 */
export function throttleClient(address: string): string {
  if (!isIPv6(address)) return address
  const hextets = ipv6Hextets(address.replace(/%.*$/, ''))
  if (hextets.slice(0, 5).every((h) => h === 0) && hextets[5] === 0xffff) {
    return [hextets[6]! >> 8, hextets[6]! & 0xff, hextets[7]! >> 8, hextets[7]! & 0xff].join('.')
  }
  return `${hextets
    .slice(0, 4)
    .map((h) => h.toString(16))
    .join(':')}::/64`
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Hextets(address: string): number[] {
  const [head = '', tail] = address.split('::')
  const groups = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [Number.parseInt(g, 16)]
          const [a, b, c, d] = g.split('.').map(Number)
          return [(a! << 8) | b!, (c! << 8) | d!]
        })
  const first = groups(head)
  const last = tail === undefined ? [] : groups(tail)
  return [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last]
}

/** The client a request is counted as, for the per-address rate limits' keys and the sign-in lockout. */
export function requestClient(request: { readonly ip: string }): string {
  return throttleClient(request.ip || 'unknown')
}
