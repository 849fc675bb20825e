import { createReadStream } from "node:fs";
import { copyFile, mkdir, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { ConveyorError } from "../errors.js";
import type { StoredDebugFile } from "./types.js";

/*
 * Where a run's debug files are written locally: `<dataDir>/runs/<runId>/debug/`.
 * The pipeline's `runFolder` uses the same layout; it is repeated here because
 * the state layer must not depend on the pipeline.
 */
export function localDebugFolder(dataDir: string, runId: string): string {
  return path.resolve(dataDir, "runs", runId, "debug");
}

/** A name relative to the debug folder, with `/` separators, that cannot climb out of it. */
export function isDebugFileName(name: string): boolean {
  if (name === "" || name.length > 500 || name.includes("\u0000") || path.isAbsolute(name) || /^[A-Za-z]:/.test(name)) return false;
  const parts = name.split(/[\\/]/);
  return parts.every((p) => p !== "" && p !== "." && p !== "..");
}

export function checkDebugFileName(name: string): void {
  if (!isDebugFileName(name)) {
    throw new ConveyorError("usage", `debug file name ${JSON.stringify(name)} is not allowed: give a name from the run's debug_files`);
  }
}

/** The run ids the stores accept: what `newRunId` makes, and nothing that could name another folder. */
export function checkRunId(runId: string): void {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(runId)) throw new ConveyorError("usage", `run id ${JSON.stringify(runId)} is not a run id`);
}

/**
 * Debug files kept in the local run folders (the SQLite store: one machine,
 * so the folder the run wrote is where every reader looks).
 */
export class FolderDebugFiles {
  constructor(private readonly dataDir: string) {}

  private file(runId: string, name: string): string {
    checkRunId(runId);
    checkDebugFileName(name);
    return path.join(localDebugFolder(this.dataDir, runId), ...name.split(/[\\/]/));
  }

  async put(runId: string, name: string, file: string): Promise<void> {
    const target = this.file(runId, name);
    if (path.resolve(file) === target) return;
    await mkdir(path.dirname(target), { recursive: true });
    await copyFile(file, target);
  }

  async get(runId: string, name: string): Promise<StoredDebugFile | null> {
    const file = this.file(runId, name);
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) return null;
    return { size: info.size, open: (start = 0) => createReadStream(file, { start }) };
  }

  async list(runId: string): Promise<string[]> {
    checkRunId(runId);
    const root = localDebugFolder(this.dataDir, runId);
    const out: string[] = [];
    const walk = async (rel: string): Promise<void> => {
      const entries = await readdir(path.join(root, rel), { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const child = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) await walk(child);
        else if (e.isFile()) out.push(child);
      }
    };
    await walk("");
    return out.sort();
  }
}
