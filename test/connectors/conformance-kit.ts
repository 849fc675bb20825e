import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { copyFile, mkdir, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { pino } from "pino";
import { loadSettings } from "../../src/config.js";
import type { TestContext } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import type { TransportOptions } from "../../connectors/options.js";
import type { ConnectionConfig, Connector, ConnectorContext, RemoteFile } from "../../connectors/types.js";

/**
 * What a connector's test file hands the shared conformance suite: a running
 * real server, a way to build the connector, and server-side access to the
 * files it serves so the suite can check what really arrived.
 */
export interface ServerFiles {
  /** The local folder behind connection.path, when there is one: the suite watches it during an upload. */
  root?: string;
  /** Place a local file on the server at `rel` (relative to connection.path). */
  put(rel: string, localFile: string): Promise<void>;
  /** Write small content on the server, optionally with a modification time. */
  write(rel: string, content: string | Buffer, modified?: Date): Promise<void>;
  /** sha256 hex of a server file, or null when absent. */
  hash(rel: string): Promise<string | null>;
  /** Names in a server folder (files and folders), [] when absent. */
  names(rel: string): Promise<string[]>;
  /** Size of a server file, or null when absent. */
  size(rel: string): Promise<number | null>;
  /** Names with sizes in one server answer, when the server can: the atomic-upload watch uses it. */
  entries?(rel: string): Promise<Array<{ name: string; size: number }>>;
}

export interface ConformanceTarget {
  /** Valid connection to the running server. */
  connection: ConnectionConfig;
  create(connection: ConnectionConfig, context: ConnectorContext, options?: TransportOptions): Connector;
  files: ServerFiles;
  /** Logins the server has seen (password or key), to prove a wrong password is tried once. */
  loginAttempts?: () => number;
  faults?: {
    /** The next transfer in `direction` loses its connection after about `afterBytes`. */
    dropMidTransfer(direction: "download" | "upload", afterBytes: number): void;
    /** From now on the server stops answering (sockets stay open). */
    slow(): void;
    clear(): void;
  };
  /** Connection variants that must be refused without retry, e.g. a wrong host key. */
  refusals?: Array<{ name: string; overrides: Partial<ConnectionConfig>; code: ErrorCode }>;
  /** A pattern that must appear in the verbose trace: proves tracing is on and redacted. */
  traceMarker?: RegExp;
  /** false when the protocol's listing has no modification times. */
  listsModified?: boolean;
  /** false when a listing cannot know sizes (an http feed is sized by downloading it). */
  listsSize?: boolean;
  /**
   * Set when a connection names one file (http: a URL) rather than a folder:
   * the suite then makes a connection per file and direction it works on, and
   * a listing of it must show that one file.
   */
  fileConnection?(rel: string, direction: "download" | "upload"): ConnectionConfig;
  /** Bytes of the round-trip and dropped-connection files (default 50 MB and 24 MB); a mail server takes a few MB. */
  transferSize?: number;
  /** How this connector names a file that is not there, when a name alone cannot (e-mail: a message uid). */
  missingFile?: RemoteFile;
  /**
   * What does not apply to this connector, each with the reason the suite
   * prints when it skips the matching test. Anything not named here must pass.
   */
  unsupported?: Partial<Record<Capability, string>>;
  /**
   * A check that applies but the connector fails today, with what is wrong:
   * the test still runs; while the defect shows it is skipped with that text,
   * and once the connector is fixed it fails until the entry is removed.
   */
  knownDefects?: Partial<Record<DefectCheck, string>>;
  close(): Promise<void>;
}

/** Parts of the suite a connector may declare not applicable (with a reason). */
export type Capability =
  | "password" | "delete" | "move" | "mkdir" | "atomicListing" | "trace" | "faults" | "refusals" | "absolutePath" | "missingFolder"
  | "folders" | "paths" | "replace";

/** Checks a target may name in knownDefects. */
export type DefectCheck = "dropMidDownload" | "dropMidUpload";

/** The connection the suite uses for `rel`: the target's own, or the one naming that file. */
export function connectionFor(target: ConformanceTarget, rel: string, direction: "download" | "upload"): ConnectionConfig {
  return target.fileConnection?.(rel, direction) ?? target.connection;
}

/** ServerFiles over a local folder: what ftp, sftp and local storage servers serve. */
export function folderFiles(root: string): ServerFiles {
  const abs = (rel: string): string => path.join(root, rel);
  return {
    root,
    async put(rel, localFile) {
      await mkdir(path.dirname(abs(rel)), { recursive: true });
      await copyFile(localFile, abs(rel));
    },
    async write(rel, content, modified) {
      await mkdir(path.dirname(abs(rel)), { recursive: true });
      await writeFile(abs(rel), content);
      if (modified) await utimes(abs(rel), modified, modified);
    },
    async hash(rel) {
      return (await exists(abs(rel))) ? sha256File(abs(rel)) : null;
    },
    async names(rel) {
      return readdir(abs(rel)).catch(() => []);
    },
    async size(rel) {
      return stat(abs(rel)).then((s) => s.size, () => null);
    },
  };
}

export async function exists(file: string): Promise<boolean> {
  return stat(file).then(() => true, () => false);
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(file), hash);
  return hash.digest("hex");
}

/** Random content streamed to disk, 1 MiB at a time. */
export async function randomFile(file: string, bytes: number): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  const out = createWriteStream(file);
  const hash = createHash("sha256");
  for (let left = bytes; left > 0; left -= 1 << 20) {
    const chunk = randomBytes(Math.min(left, 1 << 20));
    hash.update(chunk);
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return hash.digest("hex");
}

export async function tempDir(prefix: string): Promise<string> {
  const dir = path.join(tmpdir(), `${prefix}-${process.pid}-${randomBytes(4).toString("hex")}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** A context whose logger keeps every line (debug and up, verbose traces on) for the secret checks. */
export function capturingContext(now?: () => number): { context: ConnectorContext; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, callback) {
      lines.push(chunk.toString());
      callback();
    },
  });
  // A plain pino, not createLogger: the test must see what the connector wrote, not what masking rescued.
  const logger = pino({ level: "debug" }, sink);
  const store = new Map<string, unknown>();
  const context: ConnectorContext = {
    // The servers under test listen on loopback, which the network guard refuses by default.
    settings: { ...loadSettings({ env: {}, cwd: tmpdir() }), allowPrivateHosts: true },
    logger,
    metadata: { get: (k) => store.get(k), set: async (k, v) => void store.set(k, v) },
    apiUser: "conformance",
    verbose: true,
    ...(now ? { now } : {}),
  };
  return { context, lines };
}

/** Skips the running test, printing the target's reason, when it declares `cap` not applicable. */
export function skipUnsupported(ctx: TestContext, target: ConformanceTarget, cap: Capability): void {
  const reason = target.unsupported?.[cap];
  if (reason !== undefined) ctx.skip(`not applicable (${cap}): ${reason}`);
}
