import { atomicDownload } from "./atomic.js";
import { moveInto, uploadInto, type FolderServer } from "./folder-ops.js";
import { withIdleTimeout, timeoutError } from "./deadline.js";
import { classifyError, type ErrorSite } from "./errors.js";
import { resolveOptions, type TransportOptions } from "./options.js";
import { relativeJoin, remoteJoin, safeRelative } from "./paths.js";
import { Session } from "./session.js";
import { rangedDownload, type RangeOptions } from "./sftp-ranges.js";
import { extraChannels, openSftpSession, sftpServer, type SftpSession } from "./sftp-session.js";
import type { ConnectionConfig, ConnectionTestResult, Connector, ConnectorContext, RemoteFile, TransferResult } from "./types.js";

/** Pipelined writes for uploads: one request at a time is ~20× slower (pitfalls.md, Transfers). */
const FAST_OPTIONS = { concurrency: 64, chunkSize: 256 * 1024 };

/**
 * Downloads: reads of 255 KiB (OpenSSH answers no more; 256 KiB would cost a
 * second round trip per chunk), 4 MiB requested ahead per channel (more than
 * ssh2's 2 MiB channel window, so the window is the only limit), 8 MiB
 * ranges per channel, and contiguous chunks written 2 MiB at a time.
 */
export const RANGE_OPTIONS: RangeOptions = { chunkSize: 255 * 1024, bytesInFlight: 4 * 1024 * 1024, rangeSize: 8 * 1024 * 1024, writeBatch: 2 * 1024 * 1024 };
/**
 * Channels reading one file at once from a near server. Each adds a process on
 * the server (sshd's sftp-server): on loopback, one or two read faster than
 * four (README, bench:connectors), and two windows a round trip still keep a
 * LAN at a few milliseconds busy.
 */
export const DOWNLOAD_CHANNELS = 2;
/** Channels for a distant server, one whose answer to a realpath took FAR_MS or more: the window caps each at about 50 MB/s at 40 ms round trip. */
export const FAR_CHANNELS = 8;
/** One request's round trip: on loopback or a LAN a millisecond or two, even on a busy machine. */
const FAR_MS = 15;

/** Download tuning; the defaults are what the benchmark chose, a bench run may try others. */
export interface SftpTuning extends RangeOptions {
  channels: number;
  farChannels: number;
}

/**
 * sftp over ssh2-sftp-client. Every operation runs in the one queued session
 * under an idle watchdog: a server that stops answering fails the operation
 * with `timeout` and the socket is destroyed, so nothing hangs and the next
 * operation reconnects.
 */
export class SftpConnector implements Connector {
  readonly type: ConnectionConfig["type"];
  private readonly session: Session<SftpSession>;
  private readonly server: string;
  private readonly idleMs: number;
  /** The host key the server offered and the session accepted: a run records it (automations.md, `host_key`). */
  private hostKey: string | undefined;
  private readonly tuning: SftpTuning;

  constructor(connection: ConnectionConfig, private readonly context: ConnectorContext, options?: TransportOptions, tuning?: Partial<SftpTuning>) {
    this.tuning = { ...RANGE_OPTIONS, channels: DOWNLOAD_CHANNELS, farChannels: FAR_CHANNELS, ...tuning };
    this.type = connection.type;
    this.server = sftpServer(connection).server;
    const timeouts = resolveOptions(options);
    this.idleMs = timeouts.idleTimeoutMs;
    this.session = new Session<SftpSession>(
      {
        open: () => openSftpSession(connection, context, timeouts),
        alive: (s) => s.alive && !s.socket.destroyed,
        shut: async (s) => {
          s.alive = false;
          // end() waits for the server's goodbye; a stalled server never sends it.
          const ended = s.client.end().catch(() => false);
          const timer = setTimeout(() => s.socket.destroy(), 2_000);
          await ended;
          clearTimeout(timer);
          s.socket.destroy();
        },
      },
      context,
      `sftp ${this.server}`,
      timeouts.retryBaseDelayMs,
    );
  }

  protected async op<T>(action: string, fn: (s: SftpSession, touch: () => void) => Promise<T>): Promise<T> {
    const site: ErrorSite = { protocol: this.type, server: this.server, action, phase: "operation" };
    try {
      return await this.session.run((s) => {
        this.hostKey = s.fingerprint;
        return withIdleTimeout(
          this.idleMs,
          (touch) => fn(s, touch),
          () => {
            s.alive = false;
            s.socket.destroy();
          },
          () => timeoutError(`sftp ${action} on ${this.server}`, this.idleMs),
        );
      });
    } catch (err) {
      throw classifyError(err, site);
    }
  }

  async list(folder = ""): Promise<RemoteFile[]> {
    const rel = safeRelative(folder, "folder");
    return this.op(`list ${rel || "."}`, async (s) => {
      const entries = await s.client.list(remoteJoin(s.root, rel));
      return entries
        .filter((e) => e.type === "-" && !/[/\\]/.test(e.name))
        .map((e) => ({
          name: e.name,
          path: relativeJoin(rel, e.name),
          size: e.size,
          modified: e.modifyTime > 0 ? new Date(e.modifyTime) : null,
        }));
    });
  }

  async download(file: RemoteFile, localPath: string): Promise<TransferResult> {
    const rel = safeRelative(file.path);
    return this.op(`download ${rel}`, (s, touch) =>
      atomicDownload(localPath, file.size, async (part) => {
        // A file of one range gains nothing from more channels but their set-up round trips.
        const ranges = Math.ceil(file.size / this.tuning.rangeSize);
        // Far away, throughput is windows in flight per round trip: more channels, more windows.
        const far = ranges > this.tuning.channels && (await roundTripMs(s)) >= FAR_MS;
        const wanted = Math.min(far ? Math.max(this.tuning.farChannels, this.tuning.channels) : this.tuning.channels, ranges);
        const extra = extraChannels(s, wanted - 1);
        try {
          await rangedDownload(s.sftp, extra, remoteJoin(s.root, rel), part, this.tuning, touch);
        } finally {
          // Ended as each opens: one the server sets up after the download has ended too.
          for (const channel of extra.opened) channel.then((sftp) => sftp.end(), () => undefined);
        }
      }),
    );
  }

  async upload(localPath: string, remoteName: string): Promise<TransferResult> {
    const rel = safeRelative(remoteName, "file name");
    return this.op(`upload ${rel}`, (s, touch) => uploadInto(folderServer(s, touch), s.root, rel, localPath));
  }

  async delete(file: RemoteFile): Promise<void> {
    const rel = safeRelative(file.path);
    await this.op(`delete ${rel}`, async (s) => void (await s.client.delete(remoteJoin(s.root, rel))));
  }

  async move(file: RemoteFile, folder: string): Promise<string> {
    const rel = safeRelative(file.path);
    const target = safeRelative(folder, "folder");
    return this.op(`move ${rel} to ${target}`, (s, touch) => moveInto(folderServer(s, touch), s.root, rel, target, this.context.now ?? Date.now));
  }

  async mkdir(folder: string): Promise<void> {
    const rel = safeRelative(folder, "folder");
    await this.op(`mkdir ${rel}`, (s) => ensureDir(s, remoteJoin(s.root, rel)));
  }

  async test(): Promise<ConnectionTestResult> {
    return this.op("test", async (s) => {
      const kind = await s.client.exists(s.root);
      if (kind !== "d") throw Object.assign(new Error(`folder ${s.root} does not exist`), { code: "ENOENT" });
      return { ok: true as const, facts: { server: this.server, host_key: s.fingerprint, path: s.root } };
    });
  }

  facts(): Record<string, string> {
    return this.hostKey ? { host_key: this.hostKey } : {};
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}

/** Milliseconds of one request and its answer on the session's channel (a realpath, which the server answers at once). */
async function roundTripMs(s: SftpSession): Promise<number> {
  const started = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => s.sftp.realpath(".", (err) => (err ? reject(err) : resolve())));
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** `touch` is the op's progress signal: a long upload that still moves bytes is not idle. */
function folderServer(s: SftpSession, touch: () => void): FolderServer {
  return {
    put: async (local, remote) => void (await s.client.fastPut(local, remote, { ...FAST_OPTIONS, step: () => touch() })),
    size: async (remote) => (await s.client.stat(remote)).size,
    rename: (from, to) => replace(s, from, to),
    remove: async (remote) => void (await s.client.delete(remote, true)),
    ensureDir: (remote) => ensureDir(s, remote),
    exists: async (remote) => (await s.client.exists(remote)) !== false,
    move: async (from, to) => void (await s.client.rename(from, to)),
  };
}

async function ensureDir(s: SftpSession, dir: string): Promise<void> {
  if ((await s.client.exists(dir)) === "d") return;
  await s.client.mkdir(dir, true);
}

/** SFTP v3 rename refuses an existing target; OpenSSH's posix-rename replaces it atomically. */
async function replace(s: SftpSession, from: string, to: string): Promise<void> {
  if ((await s.client.exists(to)) === false) {
    await s.client.rename(from, to);
    return;
  }
  try {
    await s.client.posixRename(from, to);
  } catch {
    await s.client.delete(to);
    await s.client.rename(from, to);
  }
}

export function createSftpConnector(connection: ConnectionConfig, context: ConnectorContext, options?: TransportOptions): Connector {
  return new SftpConnector(connection, context, options);
}
