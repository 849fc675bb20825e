import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import Papa from "papaparse";
import { expect } from "vitest";
import type { Item } from "../../src/service/index.js";
import type { RunRecord } from "../../src/state/index.js";
import { allItems, bulkJobCount, debugFolder, type SampleEnv } from "./sample-env.js";

/**
 * What every sample's debug run must leave behind (runs.md, "Debug mode"):
 * the summary, the plan, the bulk files a live run would send, the mapped
 * records and the downloaded source files, all listed in the run record.
 */
export async function expectDebugFiles(env: SampleEnv, run: RunRecord, sources: readonly string[]): Promise<void> {
  const folder = debugFolder(env, run);
  const listed = new Set(run.debug_files);
  for (const name of ["summary.json", "plan.csv", "records.csv", ...sources.map((s) => `source/${s}`)]) {
    expect(listed.has(name), `${name} listed in ${[...listed].join(", ")}`).toBe(true);
    expect(existsSync(path.join(folder, name)), `${name} written`).toBe(true);
  }
  const bulk = run.debug_files.filter((f) => /^bulk-\d+\.csv$/.test(f));
  const writes = run.counts.create + run.counts.update + run.counts.remove;
  expect(bulk.length > 0).toBe(writes > 0);
  const summary = JSON.parse(await readFile(path.join(folder, "summary.json"), "utf8")) as Record<string, unknown>;
  expect(summary).toMatchObject({ run: run.id, mode: "debug", outcome: run.outcome, counts: run.counts });
  // Every planned write is in exactly one bulk file row.
  let rows = 0;
  for (const name of bulk) {
    const lines = (await readFile(path.join(folder, name), "utf8")).split(/\r?\n/).filter((l) => l !== "");
    expect(lines[0]?.startsWith("action,")).toBe(true);
    rows += lines.length - 1;
  }
  expect(rows).toBe(writes);
  // Every row that mapped (none of the samples skips by a vendor action) is a mapped record, under debug_rows.
  expect(await debugRecords(env, run)).toHaveLength(Math.min(run.counts.rows - run.counts.row_errors, env.settings.debugRows));
}

export interface ServicePicture {
  items: Item[];
  bulkJobs: number;
}

export async function servicePicture(env: SampleEnv): Promise<ServicePicture> {
  return { items: await allItems(env), bulkJobs: await bulkJobCount(env) };
}

/**
 * A debug run wrote nothing: every item, every field (dateupdated included),
 * as before, and no bulk import job reached the service. Its one write-class
 * request is the scope's bulk export (a POST that changes no data).
 */
export async function expectNoChange(env: SampleEnv, run: RunRecord, before: ServicePicture): Promise<void> {
  expect(await servicePicture(env)).toEqual(before);
  expect(run.requests.write).toBe(1);
}

/** `records.csv` parsed: the mapped records a debug run shows, every value as text. */
export async function debugRecords(env: SampleEnv, run: RunRecord): Promise<Array<Record<string, string>>> {
  const text = await readFile(path.join(debugFolder(env, run), "records.csv"), "utf8");
  const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true, dynamicTyping: false });
  expect(parsed.errors).toEqual([]);
  return parsed.data;
}

/** The `records.csv` header: the mapped fields a debug run shows. */
export async function recordsHeader(env: SampleEnv, run: RunRecord): Promise<string[]> {
  const text = await readFile(path.join(debugFolder(env, run), "records.csv"), "utf8");
  return (text.split(/\r?\n/)[0] ?? "").split(",");
}
