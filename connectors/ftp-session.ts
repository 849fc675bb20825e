import type { TLSSocket } from "node:tls";
import { Client, FTPError, enterPassiveModeIPv6, type FTPContext, type FTPResponse } from "basic-ftp";
import { connectForPassiveTransfer, parsePasvResponse } from "basic-ftp/dist/transfer.js";
import { registerSecret } from "../src/secrets.js";
import { classifyError, type ErrorSite } from "./errors.js";
import { timeoutError } from "./deadline.js";
import { allowsPrivateHosts, checkedHost, isPrivateAddress } from "./net-guard.js";
import { normalizeBase } from "./paths.js";
import { traceSink } from "./trace.js";
import type { ConnectionConfig, ConnectorContext } from "./types.js";

/** An ftp or ftps connection: the shared keys and the TLS and passive-mode switches. */
export interface FtpConnection extends ConnectionConfig {
  ssl_ftp?: boolean;
  implicit_tls?: boolean;
  use_pasv_address?: boolean;
}

/** An open, logged-in basic-ftp client plus what we learned while connecting. */
export interface FtpSession {
  client: Client;
  /** Absolute remote folder of the connection's `path`. */
  root: string;
  greeting: string;
  tls: string;
  mlsd: boolean;
  mdtm: boolean;
}

export interface FtpEndpoint {
  host: string;
  port: number;
  secure: boolean | "implicit";
  server: string;
}

export function ftpEndpoint(connection: FtpConnection): FtpEndpoint {
  const address = Array.isArray(connection.address) ? connection.address[0] : connection.address;
  const host = (address ?? "").trim();
  const tls = connection.type === "ftps" || connection.ssl_ftp === true;
  const secure: boolean | "implicit" = tls ? (connection.implicit_tls ? "implicit" : true) : false;
  const port = connection.port ?? (secure === "implicit" ? 990 : 21);
  return { host, port, secure, server: `${host}:${port}` };
}

function controlHost(ftp: FTPContext): string {
  const host = ftp.socket.remoteAddress;
  if (host === undefined) throw new Error("control connection closed before the data connection");
  return host.replace(/^::ffff:/i, "");
}

/**
 * Where a PASV data connection goes. The reply is the server's to write, so
 * an address the guard would refuse is replaced by the control connection's
 * (already checked) host. A private address from a server reached on a public
 * one is replaced too: a server behind NAT advertising its inside address.
 * `use_pasv_address: false` always takes the control host.
 */
export function passiveHost(advertised: string, control: string, useAdvertised: boolean, allowPrivate: boolean): string {
  if (!useAdvertised) return control;
  if (isPrivateAddress(advertised) && (!allowPrivate || !isPrivateAddress(control))) return control;
  return advertised;
}

function pasvStrategy(useAdvertised: boolean, allowPrivate: boolean): (ftp: FTPContext) => Promise<FTPResponse> {
  return async (ftp) => {
    const res = await ftp.request("PASV");
    const target = parsePasvResponse(res.message);
    await connectForPassiveTransfer(passiveHost(target.host, controlHost(ftp), useAdvertised, allowPrivate), target.port, ftp);
    return res;
  };
}

/**
 * EPSV, else PASV, remembering what worked. `onlyRefusals` falls back only when
 * the server refused the command; otherwise any failure does, as basic-ftp's own
 * default does (a garbled EPSV reply, a data port that does not answer).
 */
function firstWorking(strategies: Array<(ftp: FTPContext) => Promise<FTPResponse>>, onlyRefusals: boolean): (ftp: FTPContext) => Promise<FTPResponse> {
  let chosen: ((ftp: FTPContext) => Promise<FTPResponse>) | undefined;
  return async (ftp) => {
    if (chosen) return chosen(ftp);
    let last: unknown;
    for (const strategy of strategies) {
      try {
        const res = await strategy(ftp);
        chosen = strategy;
        return res;
      } catch (err) {
        last = err;
        if (ftp.closed || (onlyRefusals && !(err instanceof FTPError))) throw err;
      }
    }
    throw last;
  };
}

export async function openFtpSession(
  connection: FtpConnection,
  context: ConnectorContext,
  timeouts: { idleTimeoutMs: number; connectTimeoutMs: number },
): Promise<FtpSession> {
  const endpoint = ftpEndpoint(connection);
  const site: ErrorSite = { protocol: connection.type, server: endpoint.server, action: "connect", phase: "connect" };
  registerSecret(connection.password);
  const allowPrivate = allowsPrivateHosts(connection.type, context.settings);
  const client = new Client(timeouts.idleTimeoutMs);
  const useAdvertised = connection.use_pasv_address !== false;
  client.prepareTransfer = firstWorking([enterPassiveModeIPv6, pasvStrategy(useAdvertised, allowPrivate)], !useAdvertised);
  const sink = traceSink(context.logger, context.verbose, connection.type);
  if (sink) {
    client.ftp.verbose = true;
    client.ftp.log = sink;
  }
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(timeoutError(`${connection.type} connect to ${endpoint.server}`, timeouts.connectTimeoutMs));
      client.close();
    }, timeouts.connectTimeoutMs);
  });
  try {
    const login = (async () => {
      const target = await checkedHost(endpoint.host, allowPrivate, `${connection.type} host`);
      const greeting = await client.access({
        host: target.address,
        port: endpoint.port,
        user: connection.username ?? "anonymous",
        password: connection.password ?? "",
        secure: endpoint.secure,
        secureOptions: {
          rejectUnauthorized: connection.validate !== false,
          // SNI takes names only; an IP address there makes node warn.
          servername: target.servername,
          minVersion: "TLSv1.2",
        },
      });
      const features = await client.features();
      const base = normalizeBase(connection.path);
      const root = base.startsWith("/") ? base : await resolveRelativeBase(client, base);
      const socket = client.ftp.socket as Partial<TLSSocket>;
      const tls = typeof socket.getProtocol === "function" ? (socket.getProtocol() ?? "none") : "none";
      return { client, root, greeting: greeting.message.split("\n")[0]?.slice(0, 200) ?? "", tls, mlsd: features.has("MLST"), mdtm: features.has("MDTM") };
    })();
    return await Promise.race([login, deadline]);
  } catch (err) {
    client.close();
    throw classifyError(err, site);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

async function resolveRelativeBase(client: Client, base: string): Promise<string> {
  const home = await client.pwd();
  const prefix = home.endsWith("/") ? home : `${home}/`;
  return base === "." ? home : `${prefix}${base}`;
}
