import { createHash } from "node:crypto";
import net from "node:net";
import SftpClient from "ssh2-sftp-client";
import { Client, type ConnectConfig, type SFTPWrapper } from "ssh2";
import { registerSecret } from "../src/secrets.js";
import { classifyError, connectorError, type ErrorSite } from "./errors.js";
import { timeoutError } from "./deadline.js";
import { allowsPrivateHosts, checkedHost } from "./net-guard.js";
import { normalizeBase } from "./paths.js";
import { directReads } from "./sftp-direct-reads.js";
import type { ExtraChannels } from "./sftp-ranges.js";
import { SshReadRing } from "./ssh-read-ring.js";
import { traceSink } from "./trace.js";
import type { ConnectionConfig, ConnectorContext } from "./types.js";

/** An sftp connection: the shared keys, a private key in `password` with `is_key_file`, and the pinned host key. */
export interface SftpConnection extends ConnectionConfig {
  is_key_file?: boolean;
  passphrase?: string;
  host_key?: string;
}

export interface SftpSession {
  client: SftpClient;
  /** The session's SFTP channel, for the raw reads of a ranged download. */
  sftp: SFTPWrapper;
  /** The SSH connection under it, for opening more SFTP channels. */
  ssh: Client;
  /** We own the TCP socket so a stalled or timed-out session can be torn down at once. */
  socket: net.Socket;
  root: string;
  fingerprint: string;
  alive: boolean;
  /** The socket's reads (ssh-read-ring.ts): told when a channel's data is parsed by ssh2 itself. */
  reads: SshReadRing;
}

export function sftpServer(connection: SftpConnection): { host: string; port: number; server: string } {
  const address = Array.isArray(connection.address) ? connection.address[0] : connection.address;
  const host = (address ?? "").trim();
  const port = connection.port ?? 22;
  return { host, port, server: `${host}:${port}` };
}

/** OpenSSH's form: `SHA256:` and unpadded base64 of the key blob's hash. */
export function fingerprintOf(key: Buffer): string {
  return `SHA256:${createHash("sha256").update(key).digest("base64").replace(/=+$/, "")}`;
}

function normalizeFingerprint(value: string): string {
  const trimmed = value.trim().replace(/=+$/, "");
  return trimmed.toUpperCase().startsWith("SHA256:") ? `SHA256:${trimmed.slice(7)}` : `SHA256:${trimmed}`;
}

/** ssh2-sftp-client keeps its ssh2 connection in `client`; the type declarations do not say so. */
function sshClientOf(client: SftpClient): Client {
  const inner = (client as unknown as { client?: unknown }).client;
  if (!(inner instanceof Client)) throw new Error("ssh2-sftp-client does not expose its ssh2 connection");
  return inner;
}

/**
 * Up to `count` more SFTP channels on the session's connection, opened when
 * asked for; `opened` holds every one asked for, for the caller to end.
 * Servers cap channels per connection (OpenSSH: MaxSessions, 10), so a
 * refusal only means fewer channels.
 */
export function extraChannels(session: SftpSession, count: number): ExtraChannels & { opened: Array<Promise<SFTPWrapper>> } {
  const opened: Array<Promise<SFTPWrapper>> = [];
  return {
    count: Math.max(0, count),
    opened,
    open: () => {
      const channel = openChannel(session);
      opened.push(channel);
      return channel;
    },
  };
}

/** A new SFTP channel, its answers framed by directReads from the first byte. */
function openChannel(session: SftpSession): Promise<SFTPWrapper> {
  return new Promise((resolve, reject) =>
    session.ssh.sftp((err, sftp) => {
      if (err) return reject(err);
      if (!directReads(sftp)) session.reads.keepAll();
      resolve(sftp);
    }),
  );
}

function connectSocket(host: string, port: number, reads: SshReadRing, ms: number, what: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port, onread: reads.onread });
    // Nagle held back the small messages the server waits for (a read request, a window adjustment) until the
    // server acknowledged the last ones, and a download stalled between them (README, bench:connectors).
    socket.setNoDelay(true);
    reads.attach(socket);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(timeoutError(what, ms));
    }, ms);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeAllListeners("error");
      // ssh2 attaches its own; this one only keeps a late error from being uncaught.
      socket.on("error", () => undefined);
      resolve(socket);
    });
    socket.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

export async function openSftpSession(
  connection: SftpConnection,
  context: ConnectorContext,
  timeouts: { idleTimeoutMs: number; connectTimeoutMs: number },
): Promise<SftpSession> {
  const { host, port, server } = sftpServer(connection);
  const site: ErrorSite = { protocol: connection.type, server, action: "connect", phase: "connect" };
  registerSecret(connection.password);
  registerSecret(connection.passphrase);
  const expected = connection.host_key ? normalizeFingerprint(connection.host_key) : undefined;
  let offered = "";
  const log = context.logger;
  const session: Partial<SftpSession> & { alive: boolean } = { alive: true };
  // Without these, an error or drop between calls would be thrown by an EventEmitter with no listener.
  const client = new SftpClient("conveyor", {
    error: (err) => {
      session.alive = false;
      log.debug({ protocol: "sftp", server }, `sftp connection error: ${err instanceof Error ? err.message : String(err)}`);
    },
    end: () => void (session.alive = false),
    close: () => void (session.alive = false),
  });
  const started = Date.now();
  let socket: net.Socket | undefined;
  const reads = new SshReadRing();
  let timer: NodeJS.Timeout | undefined;
  try {
    const target = await checkedHost(host, allowsPrivateHosts(connection.type, context.settings), `${connection.type} host`);
    socket = await connectSocket(target.address, port, reads, timeouts.connectTimeoutMs, `sftp connect to ${server}`);
    const sock = socket;
    const remaining = Math.max(1, timeouts.connectTimeoutMs - (Date.now() - started));
    const config: ConnectConfig = {
      sock,
      host,
      port,
      username: connection.username,
      readyTimeout: remaining,
      keepaliveInterval: Math.min(15_000, Math.max(1_000, Math.floor(timeouts.idleTimeoutMs / 2))),
      keepaliveCountMax: 3,
      hostVerifier: (key: Buffer) => {
        offered = fingerprintOf(key);
        return expected === undefined || expected === offered;
      },
      debug: traceSink(log, context.verbose, "sftp"),
    };
    if (connection.is_key_file) {
      config.privateKey = connection.password;
      if (connection.passphrase) config.passphrase = connection.passphrase;
    } else {
      config.password = connection.password;
    }
    // ssh2-sftp-client's connect can hang past readyTimeout (a server that never opens the subsystem).
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        reject(timeoutError(`sftp connect to ${server}`, timeouts.connectTimeoutMs));
        sock.destroy();
      }, remaining);
    });
    const sftp = await Promise.race([client.connect(config), deadline]);
    // Installed before any request is sent, so the framer starts at a packet boundary.
    const ssh = sshClientOf(client);
    reads.watch(ssh);
    if (!directReads(sftp)) reads.keepAll();
    const base = normalizeBase(connection.path);
    const root = base.startsWith("/") ? base : await client.realPath(base);
    return Object.assign(session, { client, sftp, ssh, socket: sock, root, fingerprint: offered, reads });
  } catch (err) {
    socket?.destroy();
    if (expected !== undefined && offered !== "" && offered !== expected) {
      throw connectorError("host_key", site, `the server offered host key ${offered}, the connection expects ${expected}`, {
        retryable: false,
        cause: err,
        hint: `If the server's key was changed on purpose, set connection.host_key to ${offered}; otherwise someone may be intercepting the connection.`,
      });
    }
    if (err instanceof Error && /privateKey|passphrase|Cannot parse/i.test(err.message)) {
      throw connectorError("auth", site, `the private key in connection.password cannot be used: ${err.message}`, { retryable: false, cause: err });
    }
    throw classifyError(err, site);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
