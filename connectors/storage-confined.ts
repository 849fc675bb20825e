import { constants, existsSync } from "node:fs";
import { lstat, mkdir, open, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { ConveyorError } from "../src/errors.js";

/**
 * Linux names every open descriptor under /proc/self/fd: a path through it
 * starts at the folder already opened, whatever was renamed or linked since,
 * which is what openat() gives C and Node lacks. Elsewhere each step is
 * re-resolved from the account root (still checked, with a narrow race).
 */
const FD_PATHS = existsSync("/proc/self/fd");

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * One folder inside the account's storage, held open. Every name below it is
 * reached through the open descriptor, so a folder swapped for a link after
 * the check cannot redirect the operation out of the account's storage.
 */
export class ConfinedDir {
  constructor(
    private readonly handle: FileHandle,
    /** Relative to the account's storage ("" is its root); the only form errors show. */
    readonly rel: string,
    private readonly absolute: string,
  ) {}

  /** The path the kernel resolves from this open folder. */
  get path(): string {
    return FD_PATHS ? `/proc/self/fd/${this.handle.fd}` : this.absolute;
  }

  /** A name inside this folder, as a path the kernel resolves from the open folder. */
  child(name: string): string {
    return `${this.path}/${name}`;
  }

  /** The name's path relative to the account's storage, as errors show it. */
  shown(name = ""): string {
    return `/${[this.rel, name].filter((p) => p !== "").join("/")}`;
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

export function linkRefused(field: string, value: string, where: string): ConveyorError {
  return new ConveyorError("unsafe_path", `${field} "${value}" is refused: ${where} in the account's storage is a link`, {
    details: { field, link: where },
    hint: "storage paths cannot go through symbolic links, wherever they point; replace the link with a real folder or file",
  });
}

/**
 * Opens `rel` (already checked by cleanRelative) one segment at a time from the
 * account's root, each with O_NOFOLLOW, refusing any segment that is a link.
 * `create` makes missing folders, one segment at a time, so mkdir never
 * follows a link either. The account root itself is made on first use.
 */
export async function openConfinedDir(root: string, rel: string, field: string, create: boolean): Promise<ConfinedDir> {
  if (create) await mkdir(root, { recursive: true });
  let dir = new ConfinedDir(await openSegment(root, field, "/"), "", root);
  try {
    for (const segment of rel.split("/").filter((p) => p !== "")) {
      const at = dir.child(segment);
      const shown = dir.shown(segment);
      const info = await lstat(at).catch((err: unknown) => {
        if ((err as { code?: string }).code === "ENOENT" && create) return undefined;
        throw err;
      });
      if (info?.isSymbolicLink()) throw linkRefused(field, rel, shown);
      if (info && !info.isDirectory()) throw notFolder(field, shown);
      if (!info) await mkdir(at).catch(existsOk);
      const next = new ConfinedDir(await openSegment(at, field, shown), dir.rel ? `${dir.rel}/${segment}` : segment, path.join(root, dir.rel, segment));
      await dir.close();
      dir = next;
    }
    return dir;
  } catch (err) {
    await dir.close();
    throw err;
  }
}

/** A path that reopens the opened file itself (Linux), for copies the kernel makes; undefined elsewhere. */
export function openedPath(handle: FileHandle): string | undefined {
  return FD_PATHS ? `/proc/self/fd/${handle.fd}` : undefined;
}

/** Opens a regular file of an open folder without following a link in its name. */
export async function openConfinedFile(dir: ConfinedDir, name: string, field: string, value: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO planted under the name would otherwise wait forever for a writer.
    handle = await open(dir.child(name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as { code?: string }).code === "ELOOP") throw linkRefused(field, value, dir.shown(name));
    throw err;
  }
  // Checked on the opened file itself: what was checked is what is read.
  const info = await handle.stat();
  if (!info.isFile()) {
    await handle.close();
    throw new ConveyorError("unsafe_path", `${field} "${value}" is refused: ${dir.shown(name)} is not a regular file`, {
      details: { field },
      hint: "name a file, not a folder or a device",
    });
  }
  return handle;
}

/** Refuses a name of an open folder that is a link; true when the name exists. */
export async function refuseLink(dir: ConfinedDir, name: string, field: string, value: string): Promise<boolean> {
  const info = await lstat(dir.child(name)).catch(() => undefined);
  if (info?.isSymbolicLink()) throw linkRefused(field, value, dir.shown(name));
  return info !== undefined;
}

async function openSegment(at: string, field: string, shown: string): Promise<FileHandle> {
  try {
    return await open(at, DIR_FLAGS);
  } catch (err) {
    const code = (err as { code?: string }).code;
    // O_DIRECTORY|O_NOFOLLOW on a link fails with ENOTDIR or ELOOP; lstat tells the two cases apart.
    if (code === "ENOTDIR" || code === "ELOOP") {
      const info = await lstat(at).catch(() => undefined);
      if (info?.isSymbolicLink()) throw linkRefused(field, shown, shown);
      throw notFolder(field, shown);
    }
    throw err;
  }
}

function notFolder(field: string, shown: string): ConveyorError {
  return new ConveyorError("unsafe_path", `${field}: ${shown} in the account's storage is a file, not a folder`, {
    details: { field },
    hint: "a folder of the path is a file; rename it or choose another path",
  });
}

function existsOk(err: unknown): void {
  // Another run made it between the lstat and the mkdir: the open that follows checks what it is.
  if ((err as { code?: string }).code !== "EEXIST") throw err;
}
