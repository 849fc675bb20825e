import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import type { ConformanceTarget } from "./conformance-kit.js";

export interface UploadSightings<T> {
  result: T;
  /** Times the final name was seen at all, and with a size other than the complete one. */
  final: number;
  partial: number;
  /** Times a temporary `.part` name was seen in the folder. */
  temp: number;
}

/**
 * Runs `upload` while a second observer lists the server's folder as fast as
 * it can: synchronously on disk when the target serves a local folder (so even
 * a few-millisecond window is caught), else through the target's own server
 * view (an S3 listing, say), one request after another.
 */
export async function watchUpload<T>(target: ConformanceTarget, folder: string, name: string, size: number, upload: () => Promise<T>): Promise<UploadSightings<T>> {
  const seen = { final: 0, partial: 0, temp: 0 };
  const note = (names: string[], sizeOf: (n: string) => number | null): void => {
    for (const n of names) {
      if (n === name) {
        seen.final++;
        if (sizeOf(n) !== size) seen.partial++;
      } else if (n.endsWith(".part")) seen.temp++;
    }
  };
  // Nothing to watch: the target says the final name's appearance is not the connector's doing.
  if (target.unsupported?.atomicListing !== undefined) return { result: await upload(), ...seen };
  const root = target.files.root;
  if (root !== undefined) {
    const dir = path.join(root, folder);
    const poll = setInterval(() => note(safeReaddir(dir), (n) => safeSize(path.join(dir, n))), 2);
    try {
      return { result: await upload(), ...seen };
    } finally {
      clearInterval(poll);
    }
  }
  let done = false;
  const watcher = (async () => {
    while (!done) {
      if (target.files.entries) {
        const entries = await target.files.entries(folder);
        note(entries.map((e) => e.name), (n) => entries.find((e) => e.name === n)?.size ?? null);
        continue;
      }
      const names = await target.files.names(folder);
      const finalSize = names.includes(name) ? await target.files.size(`${folder}/${name}`) : null;
      note(names, () => finalSize);
    }
  })();
  try {
    return { result: await upload(), ...seen };
  } finally {
    done = true;
    await watcher;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function safeSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return -1;
  }
}
