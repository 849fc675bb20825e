import { createReadStream } from "node:fs";
import { ConveyorError } from "../errors.js";
import { csvRows } from "./csv.js";
import { openDb, servicePaths } from "./db.js";
import { applyItemChange } from "./item-ops.js";
import { ItemStore } from "./item-store.js";
import { LogStore, type ChangeSource } from "./log-store.js";

export interface LoadResult {
  rows: number;
  created: number;
  updated: number;
  failed: number;
  /** The first problems, `line N: message`, for the user to fix. */
  errors: string[];
}

const BATCH = 500;

/**
 * `conveyor service load products.csv`: products from a CSV with a `guid`
 * column go into the embedded data folder; a new guid is added, a known one
 * edited. Blank cells are left out (a load fills, it does not reset). Rows go
 * in transactions of 500 and the file is streamed, so its size does not matter.
 */
export async function loadItemsCsv(dataDir: string, file: string, now: () => number = Date.now): Promise<LoadResult> {
  const db = openDb(servicePaths(dataDir));
  const items = new ItemStore(db);
  const logs = new LogStore(db, now);
  const source: ChangeSource = { method: "bulk", requestId: `load:${file}`, jobId: "", integration: "conveyor service load" };
  const result: LoadResult = { rows: 0, created: 0, updated: 0, failed: 0, errors: [] };
  let header: string[] | undefined;
  let guidAt = -1;
  let batch: { line: number; cells: string[] }[] = [];
  const flush = db.transaction(() => {
    for (const { line, cells } of batch) {
      const fields: Record<string, string> = {};
      (header ?? []).forEach((name, i) => {
        const v = cells[i] ?? "";
        if (name && v !== "") fields[name] = v;
      });
      const guid = cells[guidAt] ?? "";
      const exists = guid !== "" && items.find("guid", guid) !== undefined;
      const outcome = applyItemChange(items, logs, { action: exists ? "edit" : "add", identifier: "guid", value: guid, fields }, source, now());
      if (outcome.ok) result[exists ? "updated" : "created"] += 1;
      else {
        result.failed += 1;
        if (result.errors.length < 20) result.errors.push(`line ${line}: ${outcome.message}`);
      }
    }
    batch = [];
  });
  try {
    let line = 0;
    const stream = createReadStream(file);
    for await (const cells of csvRows(stream)) {
      line += 1;
      if (!header) {
        header = cells.map((c) => c.trim());
        guidAt = header.indexOf("guid");
        if (guidAt < 0) throw new ConveyorError("header_mismatch", `${file} has no guid column; its columns are ${header.join(", ")}`, { hint: "the first line must name the columns, one of them guid" });
        continue;
      }
      result.rows += 1;
      batch.push({ line, cells });
      if (batch.length >= BATCH) flush();
    }
    if (batch.length) flush();
    if (!header) throw new ConveyorError("file_format", `${file} is empty: it needs a header line with a guid column`);
    return result;
  } catch (err) {
    if (err instanceof ConveyorError) throw err;
    throw new ConveyorError("file_missing", `cannot read ${file}: ${(err as Error).message}`, { cause: err });
  } finally {
    db.close();
  }
}
