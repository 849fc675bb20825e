import { createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { once } from "node:events";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cellsLine } from "../../src/embedded/csv-lines.js";
import { openDb, servicePaths } from "../../src/embedded/db.js";
import { exportThreads, writeInThreads } from "../../src/embedded/export-threads.js";
import { ItemStore } from "../../src/embedded/item-store.js";
import { createLogger } from "../../src/log.js";
import { startHarness, waitFor } from "./helpers.js";

const COLUMNS = ["guid", "title", "it's", "missing", "id", "sku", "stock", "price"];

/**
 * A data folder whose items span several pages of ids with gaps between
 * them: quoted and multi-line values, a lone surrogate, U+FFFD of its own,
 * and values of other JSON types, each read as the single-threaded job reads them.
 */
function seed(dir: string): { first: number; last: number } {
  const db = openDb(servicePaths(dir));
  const store = new ItemStore(db);
  db.transaction(() => {
    for (let i = 1; i <= 1400; i++) store.insert({ id: "", guid: `G${i}`, sku: `S${i}`, title: i % 7 ? `T, "${i}"` : `two\nlines ${i}`, "it's": `q${i}`, stock: String(i % 9), ...(i % 5 ? { price: `${i}.50` } : {}) });
  })();
  // Ids 300 to 799 gone: whole pages without an item, and pages cut short.
  db.prepare("DELETE FROM items WHERE id BETWEEN 300 AND 799").run();
  db.prepare("INSERT INTO items (guid, sku, fields) VALUES (?, ?, ?)").run("ODD", "S0", JSON.stringify({ title: 12.5, "it's": true, stock: 1e21, price: false }));
  store.insert({ id: "", guid: "LONE", sku: "S00", title: "lone \ud800 half", "it's": "pair 🚀", stock: "\udc00", price: "" });
  store.insert({ id: "", guid: "FFFD", sku: "S000", title: "replaced \uFFFD char", "it's": "x", stock: "\uFFFD", price: "0.1" });
  const range = store.idRange();
  db.close();
  return range;
}

/** The lines the job writes without threads: scanFields, a page at a time. */
async function singleThreaded(dir: string): Promise<string> {
  const db = openDb(servicePaths(dir));
  let text = "";
  const pages = new ItemStore(db).scanFields(COLUMNS);
  if (!pages) throw new Error("these columns are not read by SQLite");
  for await (const page of pages) for (const cells of page) text += cellsLine(cells);
  db.close();
  return text;
}

/** An export of every item's named fields read by several threads (export-threads.ts), in the order one thread reads them. */
describe("embedded service: an export read in threads", () => {
  let dir: string;
  let ids: { first: number; last: number };
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "conveyor-export-threads-"));
    ids = seed(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes the lines one thread writes, byte for byte, whatever the number of threads", async () => {
    const expected = await singleThreaded(dir);
    expect(expected.split("\r\n")).toHaveLength(1400 - 500 + 3 + 1);
    for (const threads of [1, 3]) {
      const file = path.join(dir, `threads-${threads}.csv`);
      const out = createWriteStream(file);
      const rows = await writeInThreads(out, { db: servicePaths(dir).db, columns: COLUMNS, first: ids.first, end: ids.last + 1, threads });
      out.end();
      await once(out, "close");
      expect(rows).toBe(903);
      // As bytes: a lone surrogate is written as U+FFFD, by one thread or several.
      expect(readFileSync(file).equals(Buffer.from(expected))).toBe(true);
    }
    expect(expected).toContain('ODD,12.5,true,,1401,S0,1e+21,false\r\n');
    expect(expected).toContain("LONE,lone \ud800 half,pair 🚀,,1402,S00,\udc00,\r\n");
  });

  it("through the service: the same file with and without threads, and the job says how many it took", async () => {
    const files: string[] = [];
    const logged: Array<{ threads?: number }> = [];
    for (const from of [1, undefined]) {
      const logger = createLogger({ level: "info", destination: { write: (line: string) => void logged.push(JSON.parse(line) as { threads?: number }) } });
      const h = await startHarness({ logger, ...(from === undefined ? {} : { exportThreadsFrom: from }) }, dir);
      try {
        const { body } = await h.form("/v1/bulk/exports", { type: "items", search: "", fields: COLUMNS.slice(1).join(",") });
        const done = await waitFor(async () => {
          const s = (await h.json("GET", `/v1/bulk/exports/${String(body.bulk_file)}`)).body;
          return s.status === "complete" ? s : undefined;
        }, "export");
        expect(done.rows).toBe(903);
        files.push(await (await fetch(String(done.url))).text());
      } finally {
        await h.close();
      }
    }
    expect(files[0]).toBe(files[1]);
    expect(files[0]?.split("\r\n")[0]).toBe(COLUMNS.join(","));
    const threads = logged.filter((entry) => entry.threads !== undefined).map((entry) => entry.threads);
    expect(threads).toEqual([availableParallelism() >= 2 ? 2 : 0, 0]);
  });

  it("reads one job at a time in threads: a second export at once reads on one connection, to the same file", async () => {
    const logged: Array<{ threads?: number }> = [];
    const logger = createLogger({ level: "info", destination: { write: (line: string) => void logged.push(JSON.parse(line) as { threads?: number }) } });
    const h = await startHarness({ logger, exportThreadsFrom: 1 }, dir);
    try {
      const fields = { type: "items", search: "", fields: COLUMNS.slice(1).join(",") };
      const started = await Promise.all([h.form("/v1/bulk/exports", fields), h.form("/v1/bulk/exports", fields)]);
      const files = await Promise.all(
        started.map(async ({ body }) => {
          const done = await waitFor(async () => {
            const s = (await h.json("GET", `/v1/bulk/exports/${String(body.bulk_file)}`)).body;
            return s.status === "complete" ? s : undefined;
          }, "export");
          return (await fetch(String(done.url))).text();
        }),
      );
      expect(files[0]).toBe(files[1]);
      const threads = logged.filter((entry) => entry.threads !== undefined).map((entry) => entry.threads);
      expect(threads.sort()).toEqual(availableParallelism() >= 2 ? [0, 2] : [0, 0]);
    } finally {
      await h.close();
    }
  });

  it("fails the export with the thread's error, and stops every thread", async () => {
    const out = createWriteStream(path.join(dir, "failed.csv"));
    const missing = path.join(dir, "no-such.db");
    await expect(writeInThreads(out, { db: missing, columns: COLUMNS, first: 1, end: 5000, threads: 2 })).rejects.toThrow(/unable to open database file|no such file/i);
    out.end();
    await once(out, "close");
  });

  it("reads in threads only what SQLite reads out of each item's JSON", () => {
    const db = openDb(servicePaths(dir));
    const store = new ItemStore(db);
    expect(store.fieldRanges(["guid", "sku", "id", "stock", "price"])).toBeNull();
    expect(store.fieldRanges(['a"b', "title"])).toBeNull();
    expect(store.fieldRanges(["guid", "title"])?.(1, 3)).toEqual([["G1", 'T, "1"'], ["G2", 'T, "2"']]);
    db.close();
  });

  it("takes threads only for enough ids, and only with more than one core", () => {
    const cores = availableParallelism();
    expect(exportThreads(99_999, 100_000)).toBe(0);
    expect(exportThreads(100_000, 100_000)).toBe(cores < 2 ? 0 : 2);
    expect(exportThreads(300, 1)).toBe(cores < 2 ? 0 : 2);
    expect(exportThreads(200, 1)).toBe(cores < 2 ? 0 : 1);
  });
});
