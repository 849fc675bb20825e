import { readFileSync } from "node:fs";
import path from "node:path";
import Papa from "papaparse";
import { DebugFiles } from "../../src/pipeline/debug-files.js";
import type { PlannedOp } from "../../src/pipeline/planned-op.js";
import { emptyCounts, type RunRecord } from "../../src/state/index.js";

/** A finished debug run record of `account`, for a store the tests put debug files into. */
export function debugRun(id: string, account = "demo", over: Partial<RunRecord> = {}): RunRecord {
  const at = "2026-11-21T03:00:00.000Z";
  return {
    id, automation: "1", account, mode: "debug", trigger: "manual", diff: false, force: false, notify: false, email: null,
    started: at, finished: "2026-11-21T03:01:00.000Z", outcome: "success", counts: emptyCounts(), requests: { read: 1, write: 0 },
    bytes: 0, files: [], debug_files: ["errors.csv", "plan.csv", "summary.json"], guard: null, error: null, heartbeat: null, ...over,
  };
}

/** A small seeded generator: the same plan on every run of a test. */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const NASTY = ['plain', 'with, comma', 'with "quotes"', 'two\nlines', 'crlf\r\nline', ' leading space', 'trailing space ', '', 'ünïcödé €', '"', ',', '""'];

/** Writes plan.csv and errors.csv with the pipeline's own writer (DebugFiles): `ops` operations of every kind, values with quotes, commas and line breaks. */
export async function writeDebugFiles(folder: string, ops: number, seed = 7, long = 0): Promise<void> {
  const rnd = seeded(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T;
  const debug = await DebugFiles.open(folder, 10, true);
  const fields = ["price", "stock", "title", "description", "brand"];
  for (let i = 0; i < ops; i++) {
    const kind = pick(["create", "update", "update", "remove", "skipped"] as const);
    const identifier = rnd() < 0.1 ? `SKU "${i}", odd\nid` : `SKU-${i}`;
    const value = (): string => `${pick(NASTY)}${long ? "x".repeat(Math.floor(rnd() * long)) : ""}${i}`;
    let op: PlannedOp;
    if (kind === "create") op = { kind, action: "add", identifier, line: i + 2, changes: fields.slice(0, 1 + Math.floor(rnd() * 5)).map((field) => ({ field, before: null, after: value() })) };
    else if (kind === "update") op = { kind, action: pick(["edit", "relist"] as const), identifier, line: i + 2, changes: [pick(fields)].map((field) => ({ field, before: value(), after: value(), same: rnd() < 0.2 })) };
    else if (kind === "remove") op = { kind, action: "end", identifier, line: null, changes: [] };
    else op = { kind, action: null, identifier, line: i + 2, changes: [], reason: `not in scope, ${pick(NASTY)}` };
    await debug.addPlan(op);
    if (rnd() < 0.3) await debug.addError(rnd() < 0.8 ? i + 2 : null, identifier, `row ${i}: ${pick(NASTY)}`);
  }
  await debug.finish();
}

/** The whole file parsed at once: what a page must agree with. */
export function naiveRows(file: string): string[][] {
  const text = readFileSync(file, "utf8");
  const parsed = Papa.parse<string[]>(text, { header: false, newline: "\r\n", skipEmptyLines: false });
  const rows = parsed.data.slice(1);
  // The file ends in a line break: papaparse gives one empty row after it.
  if (rows.length && rows[rows.length - 1]?.length === 1 && rows[rows.length - 1]?.[0] === "") rows.pop();
  return rows;
}

export function planPath(folder: string): string {
  return path.join(folder, "plan.csv");
}
