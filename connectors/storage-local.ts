import { constants, createReadStream, createWriteStream } from "node:fs";
import { copyFile, open, readdir, lstat, rename, rm, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { ConveyorError } from "../src/errors.js";
import type { ConnectionConfig, Connector, ConnectorContext, RemoteFile, TransferResult } from "./types.js";
import { accountSegment, cleanRelative, storageSetting, isPartName, joinRelative, stampedName } from "./storage-paths.js";
import { linkRefused, openConfinedDir, openConfinedFile, openedPath, refuseLink, type ConfinedDir } from "./storage-confined.js";

/**
 * Node's own messages carry the absolute path; the storage's messages name
 * paths relative to the account's storage only, so the server's layout never
 * reaches a tenant.
 */
function fsError(err: unknown, what: string): ConveyorError {
  if (err instanceof ConveyorError) return err;
  const code = (err as { code?: string }).code ?? "";
  const details = code ? { errno: code } : {};
  if (code === "ENOENT")
    return new ConveyorError("not_found", `${what} does not exist in the account's storage`, {
      details,
      hint: "check the connection's path and the file name; both are relative to the account's storage folder",
    });
  if (code === "EACCES" || code === "EPERM")
    return new ConveyorError("auth", `${what}: permission denied in the storage folder`, { details, hint: "the worker's user needs read and write access to CONVEYOR_STORAGE" });
  if (code === "ENOSPC") return new ConveyorError("transfer", `${what}: the storage disk is full`, { details });
  return new ConveyorError("transfer", `${what} failed in the storage (${code || "unknown error"})`, { details });
}

/** `a/b/c.csv` → `["a/b", "c.csv"]`; `c.csv` → `["", "c.csv"]`. */
function split(rel: string): [string, string] {
  const dir = path.posix.dirname(rel);
  return [dir === "." ? "" : dir, path.posix.basename(rel)];
}

/**
 * The service's storage kept in a local folder (the embedded default):
 * `<storage>/<apiUser>/<path>/…`. Every path is opened one folder at a time
 * without following links (storage-confined.ts), so no link, made before or
 * during a run, leads out of the account's storage. Links are refused even
 * when they point inside it: one rule is simpler to trust than a resolver.
 * Uploads are written to a hidden `.part` name, flushed, size-checked and
 * renamed, so a reader never sees a half-written file under its final name.
 */
export class LocalStorageConnector implements Connector {
  private readonly root: string;
  private readonly base: string;

  constructor(readonly type: "sdsftp" | "sds3", private readonly conn: ConnectionConfig, private readonly ctx: ConnectorContext) {
    this.root = path.join(storageSetting(ctx.settings), accountSegment(ctx.apiUser));
    this.base = cleanRelative(conn.path, "connection.path");
  }

  /** A path relative to the connection's folder → relative to the account's storage, checked. */
  private rel(relative: string, field: string): string {
    return joinRelative([this.base, "connection.path"], [relative, field]);
  }

  private relativeToBase(rel: string): string {
    return this.base ? rel.slice(this.base.length + 1) : rel;
  }

  /** Runs `fn` in the open folder `rel`, closing it after. */
  private async inDir<T>(rel: string, field: string, create: boolean, fn: (dir: ConfinedDir) => Promise<T>): Promise<T> {
    const dir = await openConfinedDir(this.root, rel, field, create);
    try {
      return await fn(dir);
    } finally {
      await dir.close();
    }
  }

  async list(folder?: string): Promise<RemoteFile[]> {
    const rel = this.rel(folder ?? "", "folder");
    try {
      return await this.inDir(rel, "folder", false, async (dir) => {
        const files: RemoteFile[] = [];
        for (const entry of await readdir(dir.path, { withFileTypes: true })) {
          // A link is no file of the account's: it is left out, as folders are.
          if (!entry.isFile() || isPartName(entry.name)) continue;
          const info = await lstat(dir.child(entry.name)).catch(() => undefined);
          if (!info?.isFile()) continue; // removed or replaced between the listing and the lstat
          const path = this.relativeToBase(rel ? `${rel}/${entry.name}` : entry.name);
          files.push({ name: entry.name, path, size: info.size, modified: info.mtime });
        }
        return files.sort((a, b) => a.name.localeCompare(b.name));
      });
    } catch (err) {
      throw fsError(err, `folder /${rel}`);
    }
  }

  async download(file: RemoteFile, localPath: string): Promise<TransferResult> {
    const rel = this.rel(file.path, "file");
    const [dirRel, name] = split(rel);
    const part = `${localPath}.part`;
    try {
      await this.inDir(dirRel, "file", false, async (dir) => {
        const handle = await openConfinedFile(dir, name, "file", rel);
        try {
          const opened = openedPath(handle);
          // The kernel copies (copy_file_range, or a reflink on btrfs/XFS), from the file opened and checked above,
          // never by its name again: far faster than streaming the bytes through JavaScript.
          if (opened) await copyFile(opened, part, constants.COPYFILE_FICLONE);
          else await pipeline(handle.readableWebStream(), createWriteStream(part));
        } finally {
          await handle.close();
        }
      });
      await rename(part, localPath);
      return { size: (await stat(localPath)).size };
    } catch (err) {
      await rm(part, { force: true });
      throw fsError(err, `file /${rel}`);
    }
  }

  async upload(localPath: string, remoteName: string): Promise<TransferResult> {
    const rel = this.rel(remoteName, "file name");
    const [dirRel, name] = split(rel);
    const tmp = `.${name}.part`;
    try {
      const size = (await stat(localPath)).size;
      return await this.inDir(dirRel, "file name", true, async (dir) => {
        // A link at the final name would be replaced, not followed, by the rename; refused all the same so the tenant learns of it.
        await refuseLink(dir, name, "file name", rel);
        try {
          const handle = await open(dir.child(tmp), constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644).catch((err: unknown) => {
            throw (err as { code?: string }).code === "ELOOP" ? linkRefused("file name", rel, dir.shown(tmp)) : err;
          });
          try {
            await pipeline(createReadStream(localPath), async (chunks: AsyncIterable<Buffer>) => {
              for await (const chunk of chunks) await handle.write(chunk);
            });
            await handle.sync();
            const written = (await handle.stat()).size;
            if (written !== size) throw new ConveyorError("transfer", `upload of /${rel} wrote ${written} of ${size} bytes`, { retryable: true });
          } finally {
            await handle.close();
          }
          await rename(dir.child(tmp), dir.child(name));
          return { size };
        } catch (err) {
          await rm(dir.child(tmp), { force: true });
          throw err;
        }
      });
    } catch (err) {
      throw fsError(err, `upload of /${rel}`);
    }
  }

  async delete(file: RemoteFile): Promise<void> {
    const rel = this.rel(file.path, "file");
    const [dirRel, name] = split(rel);
    try {
      await this.inDir(dirRel, "file", false, async (dir) => {
        if (!(await refuseLink(dir, name, "file", rel))) throw Object.assign(new Error("missing"), { code: "ENOENT" });
        // unlink never follows the last name: a link swapped in after the check is removed itself, its target kept.
        await unlink(dir.child(name));
      });
    } catch (err) {
      throw fsError(err, `file /${rel}`);
    }
  }

  async move(file: RemoteFile, folder: string): Promise<string> {
    const rel = this.rel(file.path, "file");
    const [srcRel, name] = split(rel);
    const destRel = this.rel(folder, "move folder");
    const now = new Date((this.ctx.now ?? Date.now)());
    try {
      return await this.inDir(srcRel, "file", false, (src) =>
        this.inDir(destRel, "move folder", true, async (dest) => {
          if (!(await refuseLink(src, name, "file", rel))) throw Object.assign(new Error("missing"), { code: "ENOENT" });
          const target = (await refuseLink(dest, name, "move folder", destRel)) ? stampedName(name, now) : name;
          // Both ends are reached through the folders opened above; rename follows no link in either name.
          await rename(src.child(name), dest.child(target));
          return this.relativeToBase(`${destRel}/${target}`.replace(/^\//, ""));
        }),
      );
    } catch (err) {
      throw fsError(err, `file /${rel}`);
    }
  }

  async mkdir(folder: string): Promise<void> {
    const rel = this.rel(folder, "folder");
    await this.inDir(rel, "folder", true, async () => undefined).catch((err: unknown) => {
      throw fsError(err, `folder /${rel}`);
    });
  }

  async test(): Promise<{ ok: true; facts: Record<string, string> }> {
    const rel = this.rel("", "folder");
    await this.inDir(rel, "connection.path", true, async () => undefined).catch((err: unknown) => {
      throw fsError(err, `folder /${rel}`);
    });
    return { ok: true, facts: { storage: "local folder", folder: `/${rel}` } };
  }

  async close(): Promise<void> {
    // Nothing is held open between calls.
  }
}
