import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { ConveyorError } from "../src/errors.js";

/**
 * The private-address guard of automations.md: definitions come from tenants,
 * so an http or e-mail connection must not reach into the worker's own network
 * unless the operator allows it with CONVEYOR_ALLOW_PRIVATE_HOSTS.
 */
const blocked = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8], // unspecified / "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata endpoints live here
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  blocked.addSubnet(net, bits, "ipv4");
}
for (const [net, bits] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local
  ["ff00::", 8],
] as const) {
  blocked.addSubnet(net, bits, "ipv6");
}

/** The IPv4 address inside an IPv4-mapped or NAT64 IPv6 address, if any. */
function embeddedIPv4(address: string): string | undefined {
  const match = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (match) return match[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const hi = parseInt(hex[1] ?? "0", 16);
  const lo = parseInt(hex[2] ?? "0", 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const family = isIP(bare);
  if (family === 4) return blocked.check(bare, "ipv4");
  if (family === 6) {
    const v4 = embeddedIPv4(bare);
    if (v4) return blocked.check(v4, "ipv4");
    return blocked.check(bare, "ipv6");
  }
  return false;
}

function refuse(host: string, address: string, what: string): ConveyorError {
  return new ConveyorError("private_host", `${what} ${host} resolves to the private or loopback address ${address}, which is refused`, {
    details: { host, address },
    hint: "use a public address, or set CONVEYOR_ALLOW_PRIVATE_HOSTS=true (--allow-private-hosts) if this worker may reach internal hosts",
  });
}

/** Resolves the host and throws `private_host` when any of its addresses is private. */
export async function assertPublicHost(host: string, allowPrivate: boolean, what = "host"): Promise<void> {
  if (allowPrivate) return;
  const bare = host.replace(/^\[|\]$/g, "");
  if (isIP(bare)) {
    if (isPrivateAddress(bare)) throw refuse(host, bare, what);
    return;
  }
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) => {
    dnsLookup(bare, { all: true }, (err, list) => (err ? reject(err) : resolve(list)));
  }).catch((err: unknown) => {
    throw new ConveyorError("connect", `cannot resolve ${what} ${host}: ${(err as Error).message}`, { cause: err, retryable: true });
  });
  const bad = addresses.find((a) => isPrivateAddress(a.address));
  if (bad) throw refuse(host, bad.address, what);
}

/**
 * A `lookup` for sockets that re-checks at connect time, so a name that
 * resolved to a public address for the check cannot switch to a private one
 * for the connection (DNS rebinding).
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction | undefined {
  if (allowPrivate) return undefined;
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, list) => {
      if (err) {
        callback(err, "", 4);
        return;
      }
      const bad = list.find((a) => isPrivateAddress(a.address));
      if (bad) {
        callback(refuse(hostname, bad.address, "host"), "", 4);
        return;
      }
      if (options.all) {
        (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, list);
        return;
      }
      const first = list[0];
      if (!first) callback(new Error(`no address for ${hostname}`), "", 4);
      else callback(null, first.address, first.family);
    });
  };
}
