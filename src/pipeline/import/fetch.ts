/**
 * Step 2 of an import (runs.md): list, keep what `name`, `min_age`,
 * `select` and the ledger allow, and download each file to the run's work
 * folder before anything parses it.
 *
 * @module
 */

import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Connector, RemoteFile } from "../../../connectors/types.js";
import { compileNamePattern, type FileConfig } from "../../definition/index.js";
import { ConveyorError } from "../../errors.js";
import { sleep } from "../../retry.js";
import type { LedgerEntry, StateStore } from "../../state/index.js";
import { downloadedDigest, type FileDigest } from "./file-hash.js";
import { selectFiles, type SelectResult } from "./select.js";

export interface FetchedFile {
  remote: RemoteFile;
  localPath: string;
  size: number;
  /**
   * Worked out while the run reads the file: only the run record and a debug
   * run's copy need it, and a separate pass before reading left a core idle.
   */
  digest: Promise<FileDigest>;
}

export function ledgerEntry(file: RemoteFile): LedgerEntry {
  return { path: file.path, size: file.size, modified: file.modified ? file.modified.toISOString() : null };
}

export function ledgerKey(automation: string, index: number): string {
  return `${automation}#${index}`;
}

export interface ChooseOptions {
  connector: Connector;
  config: FileConfig;
  store: StateStore;
  ledger: string;
  now: () => number;
  signal?: AbortSignal;
  /** How long to wait between two listings of a young file. */
  stabilityPollMs?: number;
}

/** Lists and selects; a young only candidate is waited for until its size stops changing. */
export async function chooseFiles(options: ChooseOptions): Promise<SelectResult & { listed: RemoteFile[] }> {
  const { connector, config, store } = options;
  const name = config.name ? compileNamePattern(config.name) : undefined;
  const processed = new Set<string>();
  const listed = await connector.list();
  if (config.select === "new") {
    // An answer made on request (http) is new every time: its name and size say nothing of what it holds.
    for (const file of listed) if (file.generated !== true && (await store.ledgerHas(options.ledger, ledgerEntry(file)))) processed.add(file.path);
  }
  const result = selectFiles({
    files: listed,
    name,
    select: config.select,
    minAgeSeconds: config.min_age,
    now: options.now(),
    processed: (f) => processed.has(f.path),
  });
  if (result.young.length === 1 && result.young[0]) {
    const stable = await waitUntilStable(connector, result.young[0], options);
    if (stable) return { ...result, picked: [stable], young: [], listed };
  }
  return { ...(await settledBySize(connector, result, options)), listed };
}

/**
 * A listing without a time cannot show a file is old enough (automations.md,
 * `min_age`: such servers "are judged by size alone"): a picked file without
 * one is listed again after the poll interval, and left for the next run if
 * its size changed meanwhile.
 */
async function settledBySize(connector: Connector, result: SelectResult, options: ChooseOptions): Promise<SelectResult> {
  const untimed = result.picked.filter((f) => f.modified === null && f.generated !== true);
  if (untimed.length === 0 || options.config.min_age <= 0) return result;
  await sleep(options.stabilityPollMs ?? 5_000, options.signal);
  const again = new Map((await connector.list()).map((f) => [f.path, f]));
  const growing = new Set(untimed.filter((f) => again.get(f.path)?.size !== f.size));
  if (growing.size === 0) return result;
  return {
    ...result,
    picked: result.picked.filter((f) => !growing.has(f)),
    skipped: [...result.skipped, ...[...growing].map((file) => ({ file, reason: "still growing" as const }))],
  };
}

async function waitUntilStable(connector: Connector, file: RemoteFile, options: ChooseOptions): Promise<RemoteFile | null> {
  const poll = options.stabilityPollMs ?? 5_000;
  let previous = file;
  // Bounded: a file still growing after min_age of polling is left for the next run.
  const deadline = options.now() + Math.max(options.config.min_age * 1000, poll * 2);
  while (options.now() < deadline) {
    await sleep(poll, options.signal);
    const again = (await connector.list()).find((f) => f.path === file.path);
    if (!again) return null;
    if (again.size === previous.size && (again.modified?.getTime() ?? 0) === (previous.modified?.getTime() ?? 0)) return again;
    previous = again;
  }
  return null;
}

/** Downloads into `folder`, with the size of what arrived; its SHA-256 follows. */
/** `searchSecrets`: each file is also searched for the run's secrets as it is hashed, for a debug run's copy of it. */
export async function downloadFiles(connector: Pick<Connector, "download">, files: readonly RemoteFile[], folder: string, searchSecrets: boolean): Promise<FetchedFile[]> {
  await mkdir(folder, { recursive: true });
  const out: FetchedFile[] = [];
  for (const [i, remote] of files.entries()) {
    // The index keeps two files of the same name (from different folders or messages) apart.
    const localPath = path.join(folder, `${i + 1}-${path.basename(remote.name)}`);
    const { size } = await connector.download(remote, localPath);
    if (remote.size > 0 && !remote.approximateSize && size !== remote.size) {
      throw new ConveyorError("transfer", `${remote.name}: downloaded ${size} bytes but the server listed ${remote.size}`, {
        retryable: true,
        hint: "The file may still be uploading or the transfer was cut; the next run tries again.",
      });
    }
    const digest = downloadedDigest(localPath, searchSecrets);
    // Whoever records the file awaits the digest; a run that stops before then must not leave it unhandled.
    digest.catch(() => undefined);
    out.push({ remote, localPath, size, digest });
  }
  return out;
}

/**
 * Why a listing gave a run nothing to import, for the run's note: each
 * reason with how many files it left out and the first few names.
 */
export function describeNothing(result: SelectResult & { listed: RemoteFile[] }, config: Pick<FileConfig, "name" | "min_age">): string {
  if (result.listed.length === 0) return "no file to import: the folder is empty";
  const byReason = new Map<string, string[]>();
  const add = (reason: string, name: string): void => {
    byReason.set(reason, [...(byReason.get(reason) ?? []), name]);
  };
  for (const { file, reason } of result.skipped) add(reason === "no match" && config.name ? `not matching name ${JSON.stringify(config.name)}` : reason === "too young" ? `younger than min_age (${config.min_age} s)` : reason, file.name);
  for (const file of result.young) add(`still changing after waiting for min_age (${config.min_age} s)`, file.name);
  const parts = [...byReason].map(([reason, names]) => `${names.length} ${reason} (${names.slice(0, 3).join(", ")}${names.length > 3 ? ", …" : ""})`);
  return `no file to import: ${result.listed.length} listed, ${parts.join(", ")}`;
}

export function describeListing(result: SelectResult & { listed: RemoteFile[] }, pattern: string | undefined): string {
  const names = result.listed.map((f) => f.name);
  const shown = names.slice(0, 20).join(", ") + (names.length > 20 ? `, … (${names.length} in all)` : "");
  return `no file matches name ${pattern ? JSON.stringify(pattern) : "(any)"}; the folder has: ${shown || "nothing"}`;
}
