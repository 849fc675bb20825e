/**
 * The index of one debug CSV file, built by one scan on first open and kept
 * as JSON in the run's folder of the data directory (`runs/<id>/view/`, pruned
 * with the run): the byte offset of every `every`-th record, so a page is one
 * seek and at most `every` records read; the record count; and for plan.csv
 * the count of lines per action, per field and per action and field, which
 * answer a filtered page's total without a scan. Its size grows with the
 * number of distinct actions and fields, never with the file's.
 *
 * @module
 */

import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { ConveyorError } from "../../errors.js";
import type { StoredDebugFile } from "../../state/index.js";
import { parseFields, scanRecords } from "./csv-scan.js";
import { actionLabel, columnsOf, type TableName } from "./tables.js";

export const INDEX_VERSION = 2;

const counted = z.array(z.tuple([z.string(), z.number().int().nonnegative()]));

const indexSchema = z.object({
  version: z.literal(INDEX_VERSION),
  name: z.enum(["plan.csv", "errors.csv"]),
  /** The file's size when indexed: another size means another file. */
  size: z.number().int().nonnegative(),
  every: z.number().int().positive(),
  records: z.number().int().nonnegative(),
  /** offsets[k]: where record k × every starts (record 0: the first after the header). */
  offsets: z.array(z.number().int().nonnegative()),
  /** Bytes of a last line cut off while it was written (not a record). */
  cutBytes: z.number().int().nonnegative(),
  actions: counted,
  fields: counted,
  /** [action, field, count]. */
  pairs: z.array(z.tuple([z.string(), z.string(), z.number().int().nonnegative()])),
  /**
   * before[k][j]: lines of pair j (in `pairs` order) before record k × every (a
   * shorter list: the pairs past its end had none yet). A filter by action or
   * field then seeks to the checkpoint before any page instead of scanning to it.
   */
  before: z.array(z.array(z.number().int().nonnegative())),
});

export type TableIndex = z.infer<typeof indexSchema>;

export const INDEX_EVERY = 1000;

export function indexFile(dataDir: string, runId: string, name: TableName): string {
  return path.join(dataDir, "runs", runId, "view", `${name}.index.json`);
}

/** The index kept for this file, or null when there is none or it is of another file (size) or version. */
export async function loadIndex(file: string, name: TableName, size: number): Promise<TableIndex | null> {
  const text = await readFile(file, "utf8").catch(() => null);
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const index = indexSchema.safeParse(parsed);
  return index.success && index.data.name === name && index.data.size === size ? index.data : null;
}

export async function saveIndex(file: string, index: TableIndex): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  // Written aside and renamed: a reader on another request never sees half an index.
  const part = `${file}.${process.pid}.part`;
  await writeFile(part, JSON.stringify(index));
  await rename(part, file);
}

/** One scan of the whole file: its header checked, then offsets and counts. */
export async function buildIndex(file: StoredDebugFile, name: TableName, every = INDEX_EVERY): Promise<TableIndex> {
  const expected = columnsOf(name);
  const offsets: number[] = [];
  const actions = new Map<string, number>();
  const fields = new Map<string, number>();
  const pairIds = new Map<string, number>();
  const pairList: Array<[string, string]> = [];
  const running: number[] = [];
  const before: number[][] = [];
  const plan = name === "plan.csv";
  let header: string[] | null = null;
  let records = 0;
  const end = await scanRecords(file.open(0), 0, (buf, start, stop, offset) => {
    if (header === null) {
      // A byte order mark is not ours to write, but a file edited by hand may have one.
      const from = buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf ? start + 3 : start;
      header = parseFields(buf, from, stop);
      return header.join(",") === expected.join(",");
    }
    if (records % every === 0) {
      offsets.push(offset);
      if (plan) before.push(running.slice());
    }
    records++;
    if (!plan) return true;
    const v = parseFields(buf, start, stop, 4);
    const action = actionLabel(v[0] ?? "", v[1] ?? "");
    const field = v[3] ?? "";
    actions.set(action, (actions.get(action) ?? 0) + 1);
    fields.set(field, (fields.get(field) ?? 0) + 1);
    const pairKey = `${action}\u0000${field}`;
    let id = pairIds.get(pairKey);
    if (id === undefined) {
      id = pairList.push([action, field]) - 1;
      pairIds.set(pairKey, id);
      running.push(0);
    }
    running[id] = (running[id] ?? 0) + 1;
    return true;
  });
  const found: string[] | null = header;
  if (found !== null && (found as string[]).join(",") !== expected.join(",")) {
    throw new ConveyorError("usage", `${name} does not begin with the header ${expected.join(",")} (it has ${(found as string[]).join(",").slice(0, 200)}): it is not a file this version of Conveyor wrote`);
  }
  return {
    version: INDEX_VERSION,
    name,
    size: file.size,
    every,
    records,
    offsets,
    cutBytes: end.cutBytes,
    actions: [...actions],
    fields: [...fields],
    pairs: pairList.map(([a, f], j): [string, string, number] => [a, f, running[j] ?? 0]),
    before,
  };
}

/** Lines with this action and field (either may be unset): from the counts, no scan. */
export function countMatching(index: TableIndex, action: string | undefined, field: string | undefined): number {
  let total = 0;
  for (const [a, f, n] of index.pairs) if ((!action || a === action) && (!field || f === field)) total += n;
  return total;
}

/**
 * The last checkpoint at or before the `first`-th matching line (0-based) of
 * a filter by action and field: where to start reading, and how many lines
 * matched before it.
 */
export function checkpointBefore(index: TableIndex, action: string | undefined, field: string | undefined, first: number): { offset: number; record: number; matched: number } {
  const wanted = index.pairs.flatMap(([a, f], j) => ((!action || a === action) && (!field || f === field) ? [j] : []));
  let best = { offset: index.offsets[0] ?? index.size, record: 0, matched: 0 };
  for (let k = 0; k < index.before.length; k++) {
    const counts = index.before[k] ?? [];
    const matched = wanted.reduce((sum, j) => sum + (counts[j] ?? 0), 0);
    if (matched > first) break;
    best = { offset: index.offsets[k] ?? index.size, record: k * index.every, matched };
  }
  return best;
}
