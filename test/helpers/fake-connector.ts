import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, readdir, rename, rm, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { isAbsolute } from "node:path";
import { ConveyorError } from "../../src/errors.js";
import { integer, known, nonEmpty, text } from "../../src/schema-kit.js";
import { partName, safeRelative, timestampedName } from "../../connectors/paths.js";
import type { ConnectorSpec } from "../../connectors/spec.js";
import type { ConnectionConfig, ConnectionTestResult, Connector, ConnectorContext, RemoteFile, TransferResult } from "../../connectors/types.js";

// A connector type that exists only in tests: a local folder behind a passcode. Its spec is
// everything Conveyor learns about it, which is the point: registering the spec is the only step.

/** The passcode the fake "server" accepts. */
export const FAKE_PASSCODE = "fake-passcode-2417";

function fsError(err: unknown, what: string): ConveyorError {
  if (err instanceof ConveyorError) return err;
  const code = (err as { code?: string }).code;
  if (code === "ENOENT") return new ConveyorError("not_found", `${what} does not exist`);
  return new ConveyorError("transfer", `${what} failed (${code ?? String(err)})`, { retryable: true });
}

/** A folder on disk: `root` is the fake's "server", `path` the connection's folder in it. */
export class FakeConnector implements Connector {
  readonly type = "fake";
  private readonly root: string;
  private readonly passcode: unknown;

  constructor(conn: ConnectionConfig, private readonly ctx: ConnectorContext) {
    // The fake's own keys arrive as unknown: its spec checked them, the connector narrows them.
    const root = conn.root;
    if (typeof root !== "string" || !isAbsolute(root)) throw new ConveyorError("definition_invalid", "connection.root must be an absolute folder");
    this.root = path.join(root, safeRelative(conn.path ?? "", "connection.path"));
    this.passcode = conn.passcode;
  }

  private abs(rel: string, field: string): string {
    return path.join(this.root, safeRelative(rel, field));
  }

  private trace(line: string): void {
    if (this.ctx.verbose) this.ctx.logger.debug({ fake: line }, "fake connector");
  }

  async test(): Promise<ConnectionTestResult> {
    this.trace("HELLO passcode ********");
    if (this.passcode !== FAKE_PASSCODE) throw new ConveyorError("auth", "the fake server refused the passcode");
    await stat(this.root).catch((err: unknown) => {
      throw fsError(err, "the connection's folder");
    });
    return { ok: true, facts: { server: "fake", folder: path.basename(this.root) } };
  }

  async list(folder = ""): Promise<RemoteFile[]> {
    const rel = safeRelative(folder, "folder");
    this.trace(`LIST ${rel}`);
    const entries = await readdir(path.join(this.root, rel), { withFileTypes: true }).catch((err: unknown) => {
      throw fsError(err, `folder "${rel}"`);
    });
    const files: RemoteFile[] = [];
    for (const e of entries) {
      if (!e.isFile() || e.name.endsWith(".part")) continue;
      const s = await stat(path.join(this.root, rel, e.name));
      files.push({ name: e.name, path: rel ? `${rel}/${e.name}` : e.name, size: s.size, modified: s.mtime });
    }
    return files;
  }

  async download(file: RemoteFile, localPath: string): Promise<TransferResult> {
    const source = this.abs(file.path, "path");
    this.trace(`GET ${file.path}`);
    const { size } = await stat(source).catch((err: unknown) => {
      throw fsError(err, `file "${file.path}"`);
    });
    const part = `${localPath}.part`;
    try {
      await pipeline(createReadStream(source), createWriteStream(part));
      await rename(part, localPath);
    } catch (err) {
      await rm(part, { force: true });
      throw fsError(err, `download of "${file.path}"`);
    }
    return { size };
  }

  async upload(localPath: string, remoteName: string): Promise<TransferResult> {
    const rel = safeRelative(remoteName, "file name");
    this.trace(`PUT ${rel}`);
    const target = path.join(this.root, rel);
    const part = path.join(this.root, partName(rel));
    await mkdir(path.dirname(target), { recursive: true });
    try {
      await pipeline(createReadStream(localPath), createWriteStream(part));
      const [sent, arrived] = await Promise.all([stat(localPath), stat(part)]);
      if (sent.size !== arrived.size) throw new ConveyorError("transfer", `upload of "${rel}" was cut`, { retryable: true });
      await rename(part, target);
      return { size: arrived.size };
    } catch (err) {
      await rm(part, { force: true });
      throw fsError(err, `upload of "${rel}"`);
    }
  }

  async delete(file: RemoteFile): Promise<void> {
    this.trace(`DELETE ${file.path}`);
    await unlink(this.abs(file.path, "path")).catch((err: unknown) => {
      throw fsError(err, `file "${file.path}"`);
    });
  }

  async mkdir(folder: string): Promise<void> {
    await mkdir(this.abs(folder, "folder"), { recursive: true });
  }

  async move(file: RemoteFile, folder: string): Promise<string> {
    const dir = safeRelative(folder, "folder");
    await this.mkdir(dir);
    const taken = await stat(path.join(this.root, dir, file.name)).then(() => true, () => false);
    const name = taken ? timestampedName(file.name, this.ctx.now?.() ?? Date.now()) : file.name;
    const moved = dir ? `${dir}/${name}` : name;
    this.trace(`MOVE ${file.path} ${moved}`);
    await rename(this.abs(file.path, "path"), path.join(this.root, moved)).catch((err: unknown) => {
      throw fsError(err, `move of "${file.path}"`);
    });
    return moved;
  }

  async close(): Promise<void> {
    // Nothing is held open between calls.
  }
}

/** The fake type's spec: keys, rules, a secret that no key name gives away, capabilities, factory. */
export const fakeSpec: ConnectorSpec = {
  type: "fake",
  label: "fake",
  keys: {
    root: nonEmpty,
    path: text,
    // `passcode` is not a secret-looking key name: only the spec says it is one.
    passcode: text,
    options: known({ note: text.optional() }, "connection.options"),
    retries: integer(0, 9),
  },
  deferrable: { retries: "number" },
  rules(_conn, _action, kit) {
    kit.need("root", "a fake connection (the folder it serves)");
    kit.need("passcode", "a fake connection");
  },
  defaults(conn) {
    conn.path ??= "";
  },
  secrets: { fields: ["passcode"] },
  capabilities: ["list", "download", "upload", "delete", "move"],
  settings: [],
  create: (connection, context) => new FakeConnector(connection, context),
};

/** The same folder as a drop box that only takes uploads: what it cannot do is refused up front. */
export const fakeDropSpec: ConnectorSpec = { ...fakeSpec, type: "fakedrop", label: "fake drop box", capabilities: ["upload"] };
