/**
 * Which listed files an import run takes (automations.md, "Which files").
 * Pure: the listing, the clock and the ledger come in; the choice and the
 * reason for every file left out come back, so `conveyor ls` can show them.
 *
 * @module
 */

import type { RemoteFile } from "../../../connectors/types.js";

export type SelectMode = "latest" | "new" | "all";

export type SkipReason = "no match" | "too young" | "still growing" | "already processed" | "not the latest";

export interface SelectInput {
  files: readonly RemoteFile[];
  /** The file config's `name` regex, matched against the whole base name. */
  name: RegExp | undefined;
  select: SelectMode;
  minAgeSeconds: number;
  now: number;
  /** select `new`: whether the ledger has seen this file. */
  processed: (file: RemoteFile) => boolean;
}

export interface SelectResult {
  picked: RemoteFile[];
  skipped: Array<{ file: RemoteFile; reason: SkipReason }>;
  /** Young files that would be the only candidate: the run waits until their size stops changing. */
  young: RemoteFile[];
}

function modifiedMs(file: RemoteFile): number {
  return file.modified ? file.modified.getTime() : 0;
}

export function selectFiles(input: SelectInput): SelectResult {
  const skipped: SelectResult["skipped"] = [];
  const matching: RemoteFile[] = [];
  for (const file of input.files) {
    if (input.name && !input.name.test(file.name)) skipped.push({ file, reason: "no match" });
    else matching.push(file);
  }
  const young: RemoteFile[] = [];
  const oldEnough: RemoteFile[] = [];
  for (const file of matching) {
    // A listing without a reliable time cannot prove a file is young; size-stability covers it.
    const age = file.modified ? (input.now - file.modified.getTime()) / 1000 : Number.POSITIVE_INFINITY;
    if (age < input.minAgeSeconds) young.push(file);
    else oldEnough.push(file);
  }
  const byAge = [...oldEnough].sort((a, b) => modifiedMs(a) - modifiedMs(b) || a.name.localeCompare(b.name));
  let picked: RemoteFile[];
  if (input.select === "latest") {
    const latest = byAge[byAge.length - 1];
    picked = latest ? [latest] : [];
    for (const file of byAge.slice(0, -1)) skipped.push({ file, reason: "not the latest" });
  } else if (input.select === "new") {
    picked = [];
    for (const file of byAge) {
      if (input.processed(file)) skipped.push({ file, reason: "already processed" });
      else picked.push(file);
    }
  } else {
    picked = byAge;
  }
  const waitable = picked.length === 0 && young.length === 1 ? young : [];
  for (const file of young) if (!waitable.includes(file)) skipped.push({ file, reason: "too young" });
  return { picked, skipped, young: waitable };
}
