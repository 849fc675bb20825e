import { constants, createReadStream, createWriteStream } from "node:fs";
import { copyFile, mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { ConveyorError } from "../src/errors.js";
import type { ConnectionConfig, Connector, ConnectorContext, RemoteFile, TransferResult } from "./types.js";
import { accountSegment, cleanRelative, isPartName, joinRelative, partName, stampedName } from "./storage-paths.js";

function fsError(err: unknown, what: string, root: string): ConveyorError {
  const code = (err as { code?: string }).code ?? "";
  if (err instanceof ConveyorError) return err;
  if (code === "ENOENT") {
    // The folder the path was looked up in: a storage set to another folder (--storage) is the usual cause.
    return new ConveyorError("not_found", `${what} does not exist in the storage`, {
      cause: err,
      hint: `check the connection's path and the file name (the account's storage is ${root}, set by --storage or CONVEYOR_STORAGE)`,
    });
  }
  if (code === "EACCES" || code === "EPERM") return new ConveyorError("auth", `${what}: permission denied in the storage folder`, { cause: err, hint: "the worker's user needs read and write access to CONVEYOR_STORAGE" });
  if (code === "ENOSPC") return new ConveyorError("transfer", `${what}: the storage disk is full`, { cause: err });
  return new ConveyorError("transfer", `${what}: ${(err as Error).message}`, { cause: err });
}

/**
 * The service's storage kept in a local folder (the embedded default):
 * `<storage>/<apiUser>/<path>/…`. Uploads are written to a hidden `.part`
 * name, flushed to disk, size-checked and renamed, so a reader never sees a
 * half-written file under its final name.
 */
export class LocalStorageConnector implements Connector {
  private readonly root: string;
  private readonly base: string;

  constructor(readonly type: "sdsftp" | "sds3", private readonly conn: ConnectionConfig, private readonly ctx: ConnectorContext) {
    this.root = path.join(ctx.settings.storage, accountSegment(ctx.apiUser));
    this.base = cleanRelative(conn.path, "connection.path");
  }

  /** The absolute path of a relative one, always inside the connection's folder. */
  private abs(relative: string, field: string): { rel: string; abs: string } {
    const rel = joinRelative([this.base, "connection.path"], [relative, field]);
    return { rel, abs: path.join(this.root, rel) };
  }

  private relativeToBase(rel: string): string {
    return this.base ? rel.slice(this.base.length + 1) : rel;
  }

  async list(folder?: string): Promise<RemoteFile[]> {
    const dir = this.abs(folder ?? "", "folder");
    const entries = await readdir(dir.abs, { withFileTypes: true }).catch((err: unknown) => {
      throw fsError(err, `folder ${dir.rel || "/"}`, this.root);
    });
    const files: RemoteFile[] = [];
    for (const entry of entries) {
      if (!entry.isFile() || isPartName(entry.name)) continue;
      const info = await stat(path.join(dir.abs, entry.name)).catch(() => undefined);
      if (!info) continue; // removed between the listing and the stat
      const rel = dir.rel ? `${dir.rel}/${entry.name}` : entry.name;
      files.push({ name: entry.name, path: this.relativeToBase(rel), size: info.size, modified: info.mtime });
    }
    return files.sort((a, b) => a.name.localeCompare(b.name));
  }

  async download(file: RemoteFile, localPath: string): Promise<TransferResult> {
    const src = this.abs(file.path, "file");
    const part = `${localPath}.part`;
    try {
      // The kernel copies (copy_file_range): a 365 MB feed took 1.5 s through 64 KB stream chunks, 0.8 s so.
      // On a copy-on-write file system (btrfs, XFS) the copy is a reflink, instant; elsewhere FICLONE falls back to copying.
      await copyFile(src.abs, part, constants.COPYFILE_FICLONE);
      await rename(part, localPath);
      return { size: (await stat(localPath)).size };
    } catch (err) {
      await rm(part, { force: true });
      throw fsError(err, `file ${src.rel}`, this.root);
    }
  }

  async upload(localPath: string, remoteName: string): Promise<TransferResult> {
    const target = this.abs(remoteName, "file name");
    const tmp = path.join(this.root, partName(target.rel));
    try {
      const size = (await stat(localPath)).size;
      await mkdir(path.dirname(target.abs), { recursive: true });
      await pipeline(createReadStream(localPath), createWriteStream(tmp));
      const handle = await open(tmp, "r+");
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      const written = (await stat(tmp)).size;
      if (written !== size) throw new ConveyorError("transfer", `upload of ${target.rel} wrote ${written} of ${size} bytes`, { retryable: true });
      await rename(tmp, target.abs);
      return { size };
    } catch (err) {
      await rm(tmp, { force: true });
      throw fsError(err, `upload of ${target.rel}`, this.root);
    }
  }

  async delete(file: RemoteFile): Promise<void> {
    const target = this.abs(file.path, "file");
    await rm(target.abs).catch((err: unknown) => {
      throw fsError(err, `file ${target.rel}`, this.root);
    });
  }

  async move(file: RemoteFile, folder: string): Promise<string> {
    const src = this.abs(file.path, "file");
    const dir = this.abs(folder, "move folder");
    await mkdir(dir.abs, { recursive: true });
    const now = new Date((this.ctx.now ?? Date.now)());
    let name = path.posix.basename(src.rel);
    const exists = await stat(path.join(dir.abs, name)).then(() => true, () => false);
    if (exists) name = stampedName(name, now);
    await rename(src.abs, path.join(dir.abs, name)).catch((err: unknown) => {
      throw fsError(err, `file ${src.rel}`, this.root);
    });
    return this.relativeToBase(`${dir.rel}/${name}`.replace(/^\//, ""));
  }

  async mkdir(folder: string): Promise<void> {
    await mkdir(this.abs(folder, "folder").abs, { recursive: true });
  }

  async test(): Promise<{ ok: true; facts: Record<string, string> }> {
    const dir = this.abs("", "folder");
    await mkdir(dir.abs, { recursive: true }).catch((err: unknown) => {
      throw fsError(err, `folder ${dir.rel || "/"}`, this.root);
    });
    return { ok: true, facts: { storage: "local folder", folder: `/${dir.rel}` } };
  }

  async close(): Promise<void> {
    // Nothing is held open between calls.
  }
}
