import { once } from "node:events";
import { FileType, FTPError, type FileInfo } from "basic-ftp";
import { atomicDownload } from "./atomic.js";
import { moveInto, uploadInto, type FolderServer } from "./folder-ops.js";
import { classifyError, type ErrorSite } from "./errors.js";
import { FileSink } from "./file-sink.js";
import { ReleasedReads } from "./released-reads.js";
import { ftpEndpoint, openFtpSession, type FtpSession } from "./ftp-session.js";
import { resolveOptions, type TransportOptions } from "./options.js";
import { relativeJoin, remoteJoin, safeRelative } from "./paths.js";
import { Session } from "./session.js";
import type { ConnectionConfig, ConnectionTestResult, Connector, ConnectorContext, RemoteFile, TransferResult } from "./types.js";

/** Past this many files a listing without MLSD skips the per-file MDTM round trips. */
const MDTM_LIMIT = 200;

/**
 * The local file's write buffer. At the default 16 KiB every 64 KiB socket read
 * filled it, the data socket was paused and resumed per read and each chunk was
 * its own write: twice curl's system time (bench:connectors). 1 MiB lets the
 * socket run on and the buffered chunks go out in one writev.
 */
const WRITE_BUFFER = 1024 * 1024;

/**
 * ftp and ftps (explicit with `ssl_ftp` or `ftps`, implicit with
 * `implicit_tls`) over basic-ftp. Every operation runs through one queued
 * session, so the client only ever has one command in flight.
 */
export class FtpConnector implements Connector {
  readonly type: ConnectionConfig["type"];
  private readonly session: Session<FtpSession>;
  private readonly server: string;

  constructor(
    private readonly connection: ConnectionConfig,
    private readonly context: ConnectorContext,
    options?: TransportOptions,
  ) {
    this.type = connection.type;
    this.server = ftpEndpoint(connection).server;
    const timeouts = resolveOptions(options);
    this.session = new Session<FtpSession>(
      {
        open: () => openFtpSession(connection, context, timeouts),
        alive: (s) => !s.client.closed,
        shut: (s) => s.client.close(),
      },
      context,
      `${connection.type} ${this.server}`,
      timeouts.retryBaseDelayMs,
    );
  }

  private site(action: string): ErrorSite {
    return { protocol: this.type, server: this.server, action, phase: "operation" };
  }

  private async op<T>(action: string, fn: (s: FtpSession) => Promise<T>): Promise<T> {
    try {
      return await this.session.run(fn);
    } catch (err) {
      throw classifyError(err, this.site(action));
    }
  }

  async list(folder = ""): Promise<RemoteFile[]> {
    const rel = safeRelative(folder, "folder");
    return this.op(`list ${rel || "."}`, async (s) => {
      const dir = remoteJoin(s.root, rel);
      const entries = await s.client.list(dir);
      const files = entries.filter((e) => e.type === FileType.File && e.name !== "" && !/[/\\]/.test(e.name));
      const useMdtm = !s.mlsd && s.mdtm && files.length <= MDTM_LIMIT;
      const out: RemoteFile[] = [];
      for (const entry of files) {
        out.push({
          name: entry.name,
          path: relativeJoin(rel, entry.name),
          size: entry.size,
          modified: await modifiedOf(s, entry, useMdtm ? `${dir}/${entry.name}` : undefined),
        });
      }
      return out;
    });
  }

  async download(file: RemoteFile, localPath: string): Promise<TransferResult> {
    const rel = safeRelative(file.path);
    return this.op(`download ${rel}`, (s) =>
      atomicDownload(localPath, file.size, async (part) => {
        const reads = new ReleasedReads();
        const out = new FileSink(part, (chunk) => reads.release(chunk), WRITE_BUFFER);
        try {
          await withDataSocket(s, reads, () => s.client.downloadTo(out, remoteJoin(s.root, rel)));
        } finally {
          // Closed before the size check, and before a failed part is removed: a late open would bring it back.
          if (!out.closed) {
            const closed = once(out, "close").catch(() => undefined);
            out.destroy();
            await closed;
          }
        }
      }),
    );
  }

  async upload(localPath: string, remoteName: string): Promise<TransferResult> {
    const rel = safeRelative(remoteName, "file name");
    return this.op(`upload ${rel}`, (s) => uploadInto(folderServer(s), s.root, rel, localPath));
  }

  async delete(file: RemoteFile): Promise<void> {
    const rel = safeRelative(file.path);
    await this.op(`delete ${rel}`, async (s) => void (await s.client.remove(remoteJoin(s.root, rel))));
  }

  async move(file: RemoteFile, folder: string): Promise<string> {
    const rel = safeRelative(file.path);
    const target = safeRelative(folder, "folder");
    return this.op(`move ${rel} to ${target}`, (s) => moveInto(folderServer(s), s.root, rel, target, this.context.now ?? Date.now));
  }

  async mkdir(folder: string): Promise<void> {
    const rel = safeRelative(folder, "folder");
    await this.op(`mkdir ${rel}`, (s) => ensureDir(s, remoteJoin(s.root, rel)));
  }

  async test(): Promise<ConnectionTestResult> {
    return this.op("test", async (s) => {
      // Proves the folder exists and is readable, not only that login worked.
      await s.client.list(s.root);
      return {
        ok: true as const,
        facts: { server: this.server, greeting: s.greeting, tls: s.tls, listing: s.mlsd ? "MLSD" : "LIST", path: s.root },
      };
    });
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}

async function modifiedOf(s: FtpSession, entry: FileInfo, mdtmPath: string | undefined): Promise<Date | null> {
  if (entry.modifiedAt) return entry.modifiedAt;
  if (mdtmPath === undefined) return null;
  try {
    return await s.client.lastMod(mdtmPath);
  } catch (err) {
    if (err instanceof FTPError) return null;
    throw err;
  }
}

function folderServer(s: FtpSession): FolderServer {
  return {
    put: async (local, remote) => void (await s.client.uploadFrom(local, remote)),
    size: (remote) => remoteSize(s, remote),
    rename: (from, to) => replace(s, from, to),
    remove: async (remote) => void (await s.client.remove(remote, true)),
    ensureDir: (remote) => ensureDir(s, remote),
    exists: async (remote) => (await remoteSize(s, remote)) !== null,
    move: async (from, to) => void (await s.client.rename(from, to)),
  };
}

async function remoteSize(s: FtpSession, remote: string): Promise<number | null> {
  try {
    return await s.client.size(remote);
  } catch (err) {
    if (err instanceof FTPError && err.code >= 500) return null;
    throw err;
  }
}

/** MKD each missing level; absolute paths keep the working directory irrelevant. */
async function ensureDir(s: FtpSession, dir: string): Promise<void> {
  const parts = dir.split("/").filter((p) => p !== "");
  let current = dir.startsWith("/") ? "" : ".";
  for (const part of parts) {
    current = current === "." ? part : `${current}/${part}`;
    const res = await s.client.sendIgnoringError(`MKD ${current}`);
    // 257 created; 550/521 usually mean "exists": CWD confirms it or fails with the reason.
    if (res.code !== 257) await s.client.cd(current);
  }
}

/** RNFR/RNTO; servers that refuse to overwrite get the old target removed first. */
async function replace(s: FtpSession, from: string, to: string): Promise<void> {
  try {
    await s.client.rename(from, to);
  } catch (err) {
    if (!(err instanceof FTPError) || (await remoteSize(s, to)) === null) throw err;
    await s.client.remove(to);
    await s.client.rename(from, to);
  }
}

export function createFtpConnector(connection: ConnectionConfig, context: ConnectorContext, options?: TransportOptions): Connector {
  return new FtpConnector(connection, context, options);
}

/**
 * Runs a transfer whose data connection reads into `reads`' slabs. Plain FTP
 * only: under TLS the data socket's bytes are the TLS layer's to read.
 */
async function withDataSocket<T>(s: FtpSession, reads: ReleasedReads, transfer: () => Promise<T>): Promise<T> {
  const context = s.client.ftp as unknown as { _newSocket?: unknown; hasTLS: boolean };
  const own = Object.prototype.hasOwnProperty.call(context, "_newSocket");
  if (context.hasTLS || typeof context._newSocket !== "function" || own) return transfer();
  context._newSocket = () => reads.newSocket();
  try {
    return await transfer();
  } finally {
    delete context._newSocket;
  }
}
