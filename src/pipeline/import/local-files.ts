/**
 * The local files of `conveyor run --file`, in place of a connection's
 * listing: each file config takes the given files its `name` matches, all
 * of them at once (select and min_age are about a supplier's folder, not a
 * file the user hands over).
 *
 * @module
 */

import { copyFile, stat } from "node:fs/promises";
import path from "node:path";
import type { RemoteFile } from "../../../connectors/types.js";
import { compileNamePattern, type FileConfig } from "../../definition/index.js";
import { ConveyorError } from "../../errors.js";

export async function localListing(files: readonly string[]): Promise<RemoteFile[]> {
  const out: RemoteFile[] = [];
  for (const file of files) {
    const full = path.resolve(file);
    const info = await stat(full).catch((err: unknown) => {
      throw new ConveyorError("usage", `--file ${file}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message}`, { cause: err });
    });
    if (!info.isFile()) throw new ConveyorError("usage", `--file ${file} is not a file`);
    out.push({ name: path.basename(full), path: full, size: info.size, modified: info.mtime });
  }
  return out;
}

/** The given files a file config takes. */
export function localFilesFor(config: FileConfig, listing: readonly RemoteFile[]): RemoteFile[] {
  if (!config.name) return [...listing];
  const pattern = compileNamePattern(config.name);
  return listing.filter((f) => pattern.test(f.name));
}

/** Every given file must be taken by some file config: one that none takes is a mistake worth stopping for. */
export function checkLocalFiles(configs: readonly FileConfig[], listing: readonly RemoteFile[]): void {
  for (const file of listing) {
    if (configs.some((c) => localFilesFor(c, [file]).length > 0)) continue;
    throw new ConveyorError("usage", `--file ${file.name} matches no file config's name (${configs.map((c) => c.name ?? "(any)").join(", ")})`, {
      hint: "Rename the file to match a file config's name, or give the file the automation expects.",
    });
  }
}

/** Copies a given file into the run's work folder, as a download would. */
export async function copyLocalFile(file: RemoteFile, localPath: string): Promise<{ size: number }> {
  try {
    await copyFile(file.path, localPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM") throw err;
    throw new ConveyorError("usage", `--file ${file.path}: permission denied; the file cannot be read by this user`, {
      cause: err,
      hint: "Give this user read permission on the file (chmod o+r, or run as its owner), or copy it somewhere readable.",
    });
  }
  return { size: (await stat(localPath)).size };
}
