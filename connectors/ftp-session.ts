import { isIP } from "node:net";
import type { TLSSocket } from "node:tls";
import { Client, FTPError, enterPassiveModeIPv6, type FTPContext, type FTPResponse } from "basic-ftp";
import { connectForPassiveTransfer } from "basic-ftp/dist/transfer.js";
import { registerSecret } from "../src/secrets.js";
import { classifyError, type ErrorSite } from "./errors.js";
import { timeoutError } from "./deadline.js";
import { normalizeBase } from "./paths.js";
import { traceSink } from "./trace.js";
import type { ConnectionConfig, ConnectorContext } from "./types.js";

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

export function ftpEndpoint(connection: ConnectionConfig): FtpEndpoint {
  const address = Array.isArray(connection.address) ? connection.address[0] : connection.address;
  const host = (address ?? "").trim();
  const tls = connection.type === "ftps" || connection.ssl_ftp === true;
  const secure: boolean | "implicit" = tls ? (connection.implicit_tls ? "implicit" : true) : false;
  const port = connection.port ?? (secure === "implicit" ? 990 : 21);
  return { host, port, secure, server: `${host}:${port}` };
}

/**
 * PASV with the data connection sent to the control connection's host: for
 * servers behind NAT that advertise an address the worker cannot reach
 * (`use_pasv_address: false`). basic-ftp's own option refuses such replies
 * instead of reusing the host.
 */
async function pasvViaControlHost(ftp: FTPContext): Promise<FTPResponse> {
  const res = await ftp.request("PASV");
  const m = /(\d{1,3}),(\d{1,3}),(\d{1,3}),(\d{1,3}),(\d{1,3}),(\d{1,3})/.exec(res.message);
  if (!m) throw new Error(`cannot parse the PASV reply: ${res.message}`);
  const port = Number(m[5]) * 256 + Number(m[6]);
  const host = ftp.socket.remoteAddress;
  if (host === undefined) throw new Error("control connection closed before the data connection");
  await connectForPassiveTransfer(host.replace(/^::ffff:/i, ""), port, ftp);
  return res;
}

function firstWorking(strategies: Array<(ftp: FTPContext) => Promise<FTPResponse>>): (ftp: FTPContext) => Promise<FTPResponse> {
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
        if (ftp.closed || !(err instanceof FTPError)) throw err;
      }
    }
    throw last;
  };
}

export async function openFtpSession(
  connection: ConnectionConfig,
  context: ConnectorContext,
  timeouts: { idleTimeoutMs: number; connectTimeoutMs: number },
): Promise<FtpSession> {
  const endpoint = ftpEndpoint(connection);
  const site: ErrorSite = { protocol: connection.type, server: endpoint.server, action: "connect", phase: "connect" };
  registerSecret(connection.password);
  const client = new Client(timeouts.idleTimeoutMs, { allowSeparateTransferHost: connection.use_pasv_address !== false });
  if (connection.use_pasv_address === false) client.prepareTransfer = firstWorking([enterPassiveModeIPv6, pasvViaControlHost]);
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
      const greeting = await client.access({
        host: endpoint.host,
        port: endpoint.port,
        user: connection.username ?? "anonymous",
        password: connection.password ?? "",
        secure: endpoint.secure,
        secureOptions: {
          rejectUnauthorized: connection.validate !== false,
          // SNI takes names only; an IP address there makes node warn.
          servername: isIP(endpoint.host) ? undefined : endpoint.host,
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
