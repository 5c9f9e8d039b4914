/**
 * Which addresses a webhook may connect to (decision 0523: refuse URLs that resolve to loopback, private, link-local or
 * metadata addresses unless SVC_WEBHOOK_ALLOW_PRIVATE=true). The check runs on the address the
 * socket is about to connect to (HttpSender's `lookup`), not on the URL when it is configured: a name that resolved
 * to a public address yesterday may resolve to 127.0.0.1 today (DNS rebinding).
 *
 * Refused: every range that is not globally routable unicast. IPv4: 0/8 "this network", 10/8, 172.16/12,
 * 192.168/16 (private), 100.64/10 (carrier-grade NAT, also Alibaba's metadata 100.100.100.200), 127/8 (loopback),
 * 169.254/16 (link-local, the cloud metadata address 169.254.169.254), 192.0.0/24 (IETF protocol assignments, with
 * Oracle's 192.0.0.192), 198.18/15 (benchmarking), 224/4 multicast, 240/4 reserved and broadcast. IPv6: ::
 * (unspecified), ::1 (loopback), fe80::/10 (link-local), fec0::/10 (old site-local), fc00::/7 (unique local, with
 * AWS's fd00:ec2::254), ff00::/8 (multicast), and the forms that carry an IPv4 address, judged by that address:
 * ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::/96 (NAT64), 2002::/16 (6to4).
 */
import * as net from "node:net"

const v4 = new net.BlockList()
for (
  const [network, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4]
  ] as const
) v4.addSubnet(network, prefix, "ipv4")

const v6 = new net.BlockList()
for (
  const [network, prefix] of [
    ["fe80::", 10],
    ["fec0::", 10],
    ["fc00::", 7],
    ["ff00::", 8]
  ] as const
) v6.addSubnet(network, prefix, "ipv6")

/** The 16 bytes of an IPv6 address (already validated by `net.isIPv6`). */
const bytes6 = (address: string): Uint8Array => {
  let text = address.toLowerCase()
  // a trailing dotted IPv4 becomes two hex groups
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted !== null) {
    const [a, b, c, d] = dotted[1]!.split(".").map(Number) as [number, number, number, number]
    text = text.slice(0, -dotted[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.includes("::") ? text.split("::") as [string, string] : [text, undefined]
  const headGroups = head === "" ? [] : head.split(":")
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":")
  const groups = tail === undefined
    ? headGroups
    : [...headGroups, ...new Array<string>(8 - headGroups.length - tailGroups.length).fill("0"), ...tailGroups]
  const out = new Uint8Array(16)
  groups.forEach((g, i) => {
    const n = parseInt(g, 16)
    out[i * 2] = n >> 8
    out[i * 2 + 1] = n & 0xff
  })
  return out
}

const dottedAt = (b: Uint8Array, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`
const zero = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0)

/**
 * Why `address` (an IP literal) must not be connected to, or undefined when it may.
 *
 * @category constructors
 */
export const refusal = (address: string): string | undefined => {
  const plain = address.split("%")[0]!
  const family = net.isIP(plain)
  if (family === 4) return v4.check(plain, "ipv4") ? `${address} is not a public address` : undefined
  if (family !== 6) return `${address} is not an IP address`
  const b = bytes6(plain)
  // IPv4 inside IPv6: judged by the IPv4 address it carries
  const embedded = zero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff
    ? dottedAt(b, 12) // ::ffff:a.b.c.d
    : zero(b, 0, 12) && !(zero(b, 12, 15) && (b[15] === 0 || b[15] === 1))
    ? dottedAt(b, 12) // ::a.b.c.d (deprecated compatible form)
    : b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(b, 4, 12)
    ? dottedAt(b, 12) // 64:ff9b::/96 NAT64
    : b[0] === 0x20 && b[1] === 0x02
    ? dottedAt(b, 2) // 2002::/16 6to4
    : undefined
  if (embedded !== undefined) {
    const inner = refusal(embedded)
    return inner === undefined ? undefined : `${address} carries ${embedded}, which is not a public address`
  }
  if (zero(b, 0, 15) && (b[15] === 0 || b[15] === 1)) return `${address} is not a public address`
  return v6.check(plain, "ipv6") ? `${address} is not a public address` : undefined
}
