import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DebugTables } from "../../src/console/plan/debug-tables.js";
import { indexFile } from "../../src/console/plan/table-index.js";
import { actionLabel, planRow, type PlanFilter } from "../../src/console/plan/tables.js";
import type { StateStore } from "../../src/state/index.js";
import { PostgresStore } from "../../src/state/postgres.js";
import { SqliteStore } from "../../src/state/sqlite.js";
import { PG_URL, PgSchemas } from "../helpers/postgres.js";
import { debugRun, naiveRows, planPath, seeded, writeDebugFiles } from "./plan-fixture.js";

const pgs = new PgSchemas();
afterAll(async () => pgs.end());

interface Rig {
  store: StateStore;
  dataDir: string;
  folder: string;
  close(): Promise<void>;
}

async function rig(kind: "sqlite" | "postgres", ops: number, long = 0): Promise<Rig> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "conveyor-tables-"));
  // The run wrote its files in another folder (PostgreSQL: another daemon); the store is where they are read.
  const folder = mkdtempSync(path.join(tmpdir(), "conveyor-tables-run-"));
  await writeDebugFiles(folder, ops, 11, long);
  const store: StateStore = kind === "sqlite" ? new SqliteStore(path.join(dataDir, "state.db"), { dataDir }) : await PostgresStore.open(PG_URL, { schema: pgs.fresh() });
  await store.createRun(debugRun("r1"));
  for (const name of ["plan.csv", "errors.csv"]) await store.putDebugFile("r1", name, path.join(folder, name));
  return {
    store,
    dataDir,
    folder,
    close: async () => {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

function expectedPage(rows: string[][], filter: PlanFilter, page: number, size: number): { total: number; rows: ReturnType<typeof planRow>[] } {
  const id = filter.identifier ?? "";
  const keep = rows
    .map((v, i) => planRow(v, i + 1))
    .filter((r) => (!filter.action || actionLabel(r.operation, r.action) === filter.action) && (!filter.field || r.field === filter.field) && (!id || (id.endsWith("*") ? r.identifier.startsWith(id.slice(0, -1)) : r.identifier === id)));
  return { total: keep.length, rows: keep.slice((page - 1) * size, page * size) };
}

describe.each(["sqlite", "postgres"] as const)("plan viewer pages on %s", (kind) => {
  let r: Rig;
  let rows: string[][];
  beforeAll(async () => {
    // Long values make the PostgreSQL copy several 1 MiB chunks, so seeks land inside later chunks.
    r = await rig(kind, 3000, kind === "postgres" ? 700 : 0);
    rows = naiveRows(planPath(r.folder));
  });
  afterAll(async () => r.close());

  it("every page without a filter is the naive read's page, and the index is kept in the data folder", async () => {
    const tables = new DebugTables(r.store, r.dataDir, { every: 37 });
    const first = await tables.plan("r1", {}, 1);
    expect(first?.total).toBe(rows.length);
    const pages = Math.ceil(rows.length / 100);
    expect(first?.pages).toBe(pages);
    expect(existsSync(indexFile(r.dataDir, "r1", "plan.csv"))).toBe(true);
    for (let page = 1; page <= pages; page++) {
      const got = await tables.plan("r1", {}, page);
      expect(got?.rows).toEqual(expectedPage(rows, {}, page, 100).rows);
      expect(got?.more).toBe(page < pages);
    }
    const actions: Record<string, number> = {};
    for (const v of rows) actions[actionLabel(v[0] ?? "", v[1] ?? "")] = (actions[actionLabel(v[0] ?? "", v[1] ?? "")] ?? 0) + 1;
    expect(first?.actions).toEqual(actions);
    // A second viewer (another request after a restart) reads the kept index and answers the same.
    expect(await new DebugTables(r.store, r.dataDir, { every: 37 }).plan("r1", {}, 7)).toEqual(await tables.plan("r1", {}, 7));
    await expect(tables.plan("r1", {}, pages + 1)).rejects.toThrow(`page must be between 1 and ${pages}`);
  });

  it("random filters: every page, forwards and then jumping, is the naive read's", async () => {
    const tables = new DebugTables(r.store, r.dataDir, { every: 50 });
    const rnd = seeded(3);
    const filters: PlanFilter[] = [
      { action: "add" },
      { field: "stock" },
      { action: "edit", field: "price" },
      { action: "skipped" },
      { identifier: "SKU-1*" },
      { identifier: "SKU-2047" },
      { identifier: 'SKU "5*' },
      { action: "end", identifier: "SKU-2*" },
      { identifier: "nothing-like-it" },
    ];
    for (let i = 0; i < 4; i++) filters.push({ action: ["add", "edit", "relist", "end"][Math.floor(rnd() * 4)], field: rnd() < 0.5 ? "title" : undefined, identifier: rnd() < 0.5 ? `SKU-${Math.floor(rnd() * 30)}*` : undefined });
    for (const filter of filters) {
      const all = expectedPage(rows, filter, 1, 100);
      const pages = Math.max(1, Math.ceil(all.total / 100));
      for (let page = 1; page <= pages; page++) {
        const got = await tables.plan("r1", filter, page);
        expect(got?.rows, JSON.stringify({ filter, page })).toEqual(expectedPage(rows, filter, page, 100).rows);
        expect(got?.more).toBe(page < pages);
      }
      const last = await tables.plan("r1", filter, pages);
      expect(last?.total).toBe(all.total);
      // Back to a middle page from the remembered starts.
      const middle = Math.ceil(pages / 2);
      expect((await tables.plan("r1", filter, middle))?.rows).toEqual(expectedPage(rows, filter, middle, 100).rows);
    }
    // A fresh viewer jumps straight to a far page of a filter.
    const fresh = new DebugTables(r.store, r.dataDir, { every: 50 });
    const want = expectedPage(rows, { field: "stock" }, 3, 100);
    const got = await fresh.plan("r1", { field: "stock" }, 3);
    expect(got?.rows).toEqual(want.rows);
    expect(got?.total).toBe(want.total);
  });

  it("errors.csv pages carry each error's row and feed line", async () => {
    const tables = new DebugTables(r.store, r.dataDir, { every: 10 });
    const naive = naiveRows(path.join(r.folder, "errors.csv"));
    const pages = Math.ceil(naive.length / 100);
    for (let page = 1; page <= pages; page++) {
      const got = await tables.errors("r1", page);
      expect(got?.total).toBe(naive.length);
      const want = naive.slice((page - 1) * 100, page * 100).map((v, i) => ({ row: (page - 1) * 100 + i + 1, line: v[0] === "" ? null : Number(v[0]), identifier: v[1], message: v[2] }));
      expect(got?.rows).toEqual(want);
    }
  });
});

describe("plan viewer edge cases", () => {
  let r: Rig;
  afterEach(async () => r.close());

  it("values with quotes, commas and line breaks come back as written", async () => {
    r = await rig("sqlite", 200);
    const tables = new DebugTables(r.store, r.dataDir, { every: 7 });
    const rows = naiveRows(planPath(r.folder));
    const text = (await tables.plan("r1", {}, 1))?.rows.flatMap((x) => [x.identifier, x.before, x.after, x.reason ?? ""]).join("|") ?? "";
    expect(text).toContain('with "quotes"');
    expect(text).toContain("two\nlines");
    expect(text).toContain("crlf\r\nline");
    expect(text).toContain('SKU "');
    expect((await tables.plan("r1", {}, 2))?.rows).toEqual(expectedPage(rows, {}, 2, 100).rows);
  });

  it("a last line cut off while it was written is not a row, and the page says so", async () => {
    r = await rig("sqlite", 300);
    const file = path.join(r.dataDir, "runs", "r1", "debug", "plan.csv");
    const whole = readFileSync(file, "utf8");
    // Cut in the middle of the last line.
    const lastStart = whole.lastIndexOf("\r\n", whole.length - 3) + 2;
    truncateSync(file, Buffer.byteLength(whole.slice(0, lastStart + 5)));
    const rows = naiveRows(planPath(r.folder));
    const tables = new DebugTables(r.store, r.dataDir, { every: 13 });
    const first = await tables.plan("r1", {}, 1);
    expect(first?.cut_off).toBe(true);
    // Quoted line breaks may make the cut line one of several text lines: the count is records, not lines.
    expect(first?.total).toBe(rows.length - 1);
    const last = await tables.plan("r1", {}, first?.pages ?? 1);
    expect(last?.rows.at(-1)).toEqual(planRow(rows[rows.length - 2] ?? [], rows.length - 1));
    expect(statSync(file).size).toBeLessThan(Buffer.byteLength(whole));
  });

  it("a run without plan.csv has no plan page; another size of the file builds a new index", async () => {
    r = await rig("sqlite", 50);
    const tables = new DebugTables(r.store, r.dataDir);
    expect(await tables.plan("nope", {}, 1)).toBeNull();
    expect((await tables.plan("r1", {}, 1))?.total).toBe(naiveRows(planPath(r.folder)).length);
    await writeDebugFiles(r.folder, 80, 5);
    await r.store.putDebugFile("r1", "plan.csv", planPath(r.folder));
    expect((await tables.plan("r1", {}, 1))?.total).toBe(naiveRows(planPath(r.folder)).length);
  });
});
