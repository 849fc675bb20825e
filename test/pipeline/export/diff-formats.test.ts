import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportSnapshotKey } from "../../../src/pipeline/export/diff.js";
import { automation, debugSource, openExportEnv, putProducts, readBack, run, type ExportEnv } from "./export-env.js";

/**
 * Diff exports over 10,000 products on the service's storage, and every
 * format read back through the import readers to the same records.
 */
const N = 10_000;
const product = (i: number, price = `${(i % 500) + 0.99}`): Record<string, string> => ({
  guid: `P${String(i).padStart(6, "0")}`,
  sku: `0${i}`,
  title: i % 7 === 0 ? `Product ${i}, "quoted"; with\nline break` : `Product ${i}`,
  price,
  stock: String(i % 40),
  brand: i % 2 ? "Acme" : "Bolt & Nut <Co>",
});

describe("export diff and formats", () => {
  let env: ExportEnv;
  const folder = (): string => path.join(env.storageRoot, "out");

  beforeAll(async () => {
    env = await openExportEnv();
    putProducts(env, Array.from({ length: N }, (_, i) => product(i)));
  });
  afterAll(() => env.close());

  const def = (fileConfig: Record<string, unknown>) =>
    automation({
      name: "Diff export",
      timezone: "UTC",
      connection: { type: "sdsftp", path: "out" },
      file_configs: [{ field_map: { guid: "id", sku: "sku", title: "title", price: "price", stock: "stock", brand: "brand" }, ...fileConfig }],
    });

  it("a diff export after changing 10 of 10,000 products delivers those 10 rows; debug never moves the snapshot", async () => {
    const a = def({ name: "diff.csv" });
    const full = await run(env, a, { diff: false });
    expect(full.error).toBeNull();
    expect(full.counts).toMatchObject({ rows: N, create: N });
    expect(await env.worker.env.store.snapshotCount(exportSnapshotKey(a.slug, 0))).toBe(N);
    expect((await readBack(path.join(folder(), "diff.csv"))).length).toBe(N);

    const changed = [3, 77, 512, 1999, 2500, 4096, 5000, 7777, 8888, 9999];
    putProducts(env, changed.map((i) => product(i, "1234.56")));
    // A debug diff run shows the 10 and leaves the snapshot where it was.
    const dry = await run(env, a, { diff: true, mode: "debug" });
    expect(dry.counts).toMatchObject({ rows: N, update: 10, unchanged: N - 10 });
    expect(await readBack(debugSource(env, dry, "diff.csv"))).toHaveLength(10);

    const diff = await run(env, a, { diff: true });
    expect(diff.error).toBeNull();
    expect(diff.counts).toMatchObject({ rows: N, create: 0, update: 10, unchanged: N - 10 });
    const rows = await readBack(path.join(folder(), "diff.csv"));
    expect(rows.map((r) => r.id)).toEqual(changed.map((i) => product(i).guid));
    expect(rows.every((r) => r.price === "1234.56")).toBe(true);

    // Nothing changed since: nothing to send.
    const quiet = await run(env, a, { diff: true });
    expect(quiet.outcome).toBe("nothing");
    expect(quiet.note).toBe(`file_configs[0]: nothing to export: all ${N} selected records are unchanged since the last export`);
    expect(quiet.counts).toMatchObject({ update: 0, create: 0, unchanged: N });
  });

  const SUBSET = "stock:<2";
  it.each([
    ["csv", "all.csv", {}],
    ["semicolon csv with a quote enclosure of its own", "semi.csv", { delimiter: ";", enclosure: "'" }],
    ["tsv", "all.tsv", {}],
    ["json", "all.json", {}],
    ["jsonl", "all.jsonl", {}],
    ["xml", "all.xml", {}],
    ["xlsx", "all.xlsx", {}],
  ] as const)("%s round-trips through the import readers to the service's records", async (_label, name, extra) => {
    const r = await run(env, def({ name, search: SUBSET, ...extra }));
    expect(r.error).toBeNull();
    const options = "delimiter" in extra ? { delimiter: extra.delimiter, enclosure: extra.enclosure } : {};
    const back = await readBack(path.join(folder(), name), options);
    const service: Record<string, string>[] = [];
    for await (const p of env.worker.env.client.exportRecords({ type: "items", search: SUBSET, fields: ["sku", "title", "price", "stock", "brand"] })) {
      service.push({ id: p.guid ?? "", sku: p.sku ?? "", title: p.title ?? "", price: p.price ?? "", stock: p.stock ?? "", brand: p.brand ?? "" });
    }
    expect(service.length).toBe(500);
    expect(back).toEqual(service);
  });

  it("an import of the exported CSV changes nothing: the same records come back", async () => {
    await run(env, def({ name: "round.csv", search: "stock:=5" }));
    const importer = automation({
      name: "Round trip import",
      action: "import",
      connection: { type: "sdsftp", path: "out" },
      file_configs: [{ name: "round\\.csv", min_age: 0, update: "edit", identifier: "guid", diff_update: 1, field_map: { guid: "id", sku: "sku", title: "title", price: "price", stock: "stock", brand: "brand" } }],
    });
    const r = await run(env, importer);
    expect(r.error).toBeNull();
    expect(r.counts).toMatchObject({ rows: 250, update: 0, unchanged: 250, row_errors: 0 });
    expect((await readFile(path.join(folder(), "round.csv"), "utf8")).split("\r\n")[0]).toBe("id,sku,title,price,stock,brand");
  });
});
