import dns, { type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { ConveyorError } from "../src/errors.js";
import type { ConnectionConfig, ConnectorSettings } from "./types.js";
import { bareHost, isPrivateAddress } from "./net-address.js";

export { isPrivateAddress } from "./net-address.js";

// The network guard of automations.md: definitions come from tenants, so no
// connector may open a socket into the worker's own network unless the
// operator allows it with CONVEYOR_ALLOW_PRIVATE_HOSTS. Every connector that
// dials a tenant's host (ftp, ftps, sftp, http and its oauth, imap, an FTP
// passive-mode address) asks `checkedHost` and connects to the address it
// returns: the name is resolved once and every address checked, so a DNS
// answer that changes between check and connect (rebinding) cannot matter.
// The refusal comes before any socket exists, so it says nothing of the port.

export const PRIVATE_HOSTS_SETTING = "CONVEYOR_ALLOW_PRIVATE_HOSTS";

/** A host the guard let through: connect to `address`; TLS names the server `servername`. */
export interface CheckedHost {
  host: string;
  address: string;
  /** The name for SNI and certificate checks; undefined for an IP literal. */
  servername: string | undefined;
}

/**
 * Whether a connection may reach private addresses. The service's own storage
 * (sdsftp, sds3) is the operator's server named in CONVEYOR_STORAGE, not a
 * tenant's choice, so it is never refused; the same holds for the SMTP relay
 * of CONVEYOR_SMTP_URL, which smtp-pool.ts dials without asking the guard.
 */
export function allowsPrivateHosts(type: ConnectionConfig["type"], settings: ConnectorSettings): boolean {
  return type === "sdsftp" || type === "sds3" || settings.allowPrivateHosts === true;
}

export function privateHostError(host: string, what: string): ConveyorError {
  const literal = isIP(bareHost(host)) !== 0;
  const said = literal ? "is a private, loopback or reserved address" : "resolves to a private, loopback or reserved address";
  return new ConveyorError("private_host", `${what} ${host} ${said}; connections into the worker's own network are refused`, {
    // The resolved address stays out: it would map the internal DNS for whoever asks.
    details: { host, setting: PRIVATE_HOSTS_SETTING },
    hint: `use the server's public address, or set ${PRIVATE_HOSTS_SETTING}=true (--allow-private-hosts) if this worker may reach internal hosts`,
  });
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dns.lookup(host, { all: true, verbatim: true }, (err, list) => (err ? reject(err) : resolve(list)));
  });
}

/**
 * Resolves `host` once and throws `private_host` when any of its addresses is
 * private; else returns the first address to connect to. With private hosts
 * allowed the host is passed through unresolved, as the libraries would use it.
 */
export async function checkedHost(host: string, allowPrivate: boolean, what = "host"): Promise<CheckedHost> {
  const bare = bareHost(host);
  const servername = isIP(bare) ? undefined : bare;
  if (allowPrivate) return { host, address: bare, servername };
  if (bare === "") throw new ConveyorError("definition_invalid", `${what} is empty; connection.address must name the server`, { hint: "write a host name or a public IP address" });
  if (isIP(bare)) {
    if (isPrivateAddress(bare)) throw privateHostError(host, what);
    return { host, address: bare, servername };
  }
  const addresses = await resolveAll(bare).catch((err: unknown) => {
    const code = (err as { code?: string }).code;
    throw new ConveyorError("connect", `cannot resolve ${what} ${host}: ${(err as Error).message}`, {
      cause: err,
      retryable: code !== "ENOTFOUND",
      hint: "check connection.address",
    });
  });
  if (addresses.some((a) => isPrivateAddress(a.address))) throw privateHostError(host, what);
  const first = addresses[0];
  if (first === undefined) throw new ConveyorError("connect", `cannot resolve ${what} ${host}: no address`, { retryable: true, hint: "check connection.address" });
  return { host, address: first.address, servername };
}
