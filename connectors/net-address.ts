import { BlockList, isIP } from "node:net";

// Which IP addresses count as private for the network guard (net-guard.ts).
// IPv6 has several ways to carry an IPv4 address (mapped, compatible, NAT64,
// 6to4, Teredo); each is unwrapped and the IPv4 inside judged, so
// `[::ffff:7f00:1]` or `[64:ff9b::7f00:1]` is loopback like 127.0.0.1.

const blockedV4 = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8], // unspecified / "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata endpoints live here
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved and broadcast
] as const) {
  blockedV4.addSubnet(net, bits, "ipv4");
}

const blockedV6 = new BlockList();
for (const [net, bits] of [
  ["64:ff9b:1::", 48], // local-use NAT64 (RFC 8215): always a private network's translator
  ["100::", 64], // discard-only
  ["2001:db8::", 32], // documentation
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // deprecated site-local, still routed inside some networks
  ["ff00::", 8], // multicast
] as const) {
  blockedV6.addSubnet(net, bits, "ipv6");
}

/** The eight 16-bit words of an IPv6 address (a trailing dotted IPv4 allowed), or undefined. */
export function ipv6Words(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    if (isIP(dotted[1]) !== 4) return undefined;
    const [a = 0, b = 0, c = 0, d = 0] = dotted[1].split(".").map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string | undefined): number[] => (part ? part.split(":").map((w) => (/^[0-9a-f]{1,4}$/.test(w) ? parseInt(w, 16) : NaN)) : []);
  const head = parse(halves[0]);
  const tail = parse(halves[1]);
  const gap = 8 - head.length - tail.length;
  if (halves.length === 1 ? gap !== 0 : gap < 1) return undefined;
  const words = [...head, ...Array<number>(halves.length === 1 ? 0 : gap).fill(0), ...tail];
  return words.some((w) => Number.isNaN(w)) ? undefined : words;
}

function v4Of(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** The IPv4 address an IPv6 address stands for or tunnels to, if any. */
export function embeddedIPv4(address: string): string | undefined {
  const w = ipv6Words(address);
  if (!w) return undefined;
  const [w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0, w6 = 0, w7 = 0] = w;
  const zeroTo = (n: number): boolean => w.slice(0, n).every((x) => x === 0);
  // ::a.b.c.d (IPv4-compatible; `::` and `::1` land in 0.0.0.0/8) and ::ffff:a.b.c.d (IPv4-mapped).
  if (zeroTo(5) && (w5 === 0 || w5 === 0xffff)) return v4Of(w6, w7);
  // ::ffff:0:a.b.c.d (SIIT IPv4-translated).
  if (zeroTo(4) && w4 === 0xffff && w5 === 0) return v4Of(w6, w7);
  // 64:ff9b::/96, the well-known NAT64 prefix.
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) return v4Of(w6, w7);
  // 2002::/16, 6to4: the IPv4 follows the prefix.
  if (w0 === 0x2002) return v4Of(w1, w2);
  // 2001::/32, Teredo: the client's IPv4 is stored inverted in the last 32 bits.
  if (w0 === 0x2001 && w1 === 0) return v4Of(~w6 & 0xffff, ~w7 & 0xffff);
  return undefined;
}

/** Strips URL brackets, an IPv6 zone (`%eth0`) and spaces: the form net.connect and isIP take. */
export function bareHost(host: string): string {
  return host.trim().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
}

/** True for loopback, private, link-local, CGNAT, unique-local, multicast, unspecified and reserved addresses. */
export function isPrivateAddress(address: string): boolean {
  const bare = bareHost(address);
  const family = isIP(bare);
  if (family === 4) return blockedV4.check(bare, "ipv4");
  if (family !== 6) return false;
  const v4 = embeddedIPv4(bare);
  if (v4 !== undefined && blockedV4.check(v4, "ipv4")) return true;
  // A public IPv4 inside does not clear the IPv6 prefix it sits in (64:ff9b:1::/48 carries one too).
  const w = ipv6Words(bare);
  return w === undefined || blockedV6.check(w.map((x) => x.toString(16)).join(":"), "ipv6");
}
