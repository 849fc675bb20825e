import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSample } from "../../samples/sample-env.js";
import { debugFolder, debugSource, listing, openExportEnv, putProducts, readBack, run, type ExportEnv } from "./export-env.js";

/**
 * samples/fitment-export-storage.json on the service's own storage (sdsftp,
 * a local folder here): one row per vehicle entry of each product's
 * `fitment` field, with the make upper-cased and model and trim trimmed.
 */
const vehicles = (list: Array<Record<string, unknown>>): string => JSON.stringify(list);

describe("samples/fitment-export-storage.json", () => {
  let env: ExportEnv;
  const today = new Date().toISOString().slice(0, 10);
  const name = `fitment-${today}.csv`;
  const folder = (): string => path.join(env.storageRoot, "exports", "fitment");

  beforeAll(async () => {
    env = await openExportEnv();
    putProducts(env, [
      {
        guid: "g-1",
        sku: "BRK-100",
        mpn: "BP-100",
        brand: "Stopwell",
        fitment: vehicles([
          { year: 2019, make: "ford", model: " F-150 ", trim: "XLT ", engine: "3.5L V6", notes: "Front, \"heavy duty\"" },
          { year: "2020", make: "Ford", model: "F-150", trim: "", engine: "5.0L V8" },
        ]),
      },
      { guid: "g-2", sku: "FLT-7", mpn: "OF-7", brand: "Filtra", fitment: vehicles([{ year: "2015", make: "toyota", model: "Corolla", trim: "LE", engine: "1.8L I4", notes: "" }]) },
      // No fitment: out of the search.
      { guid: "g-3", sku: "MISC-1", mpn: "M-1", brand: "Other", fitment: "" },
      // A fitment value that is no JSON: a row error, the others still go out.
      { guid: "g-4", sku: "BAD-1", mpn: "B-1", brand: "Other", fitment: "Ford F-150 2019" },
    ]);
  });

  afterAll(async () => {
    await env.close();
  });

  const sample = async () => {
    const a = await loadSample("fitment-export-storage.json");
    a.timezone = "UTC";
    return a;
  };
  const expected = [
    { "Part Number": "BRK-100", "Manufacturer Part": "BP-100", Brand: "Stopwell", Year: "2019", Make: "FORD", Model: "F-150", Trim: "XLT", Engine: "3.5L V6", Notes: 'Front, "heavy duty"' },
    { "Part Number": "BRK-100", "Manufacturer Part": "BP-100", Brand: "Stopwell", Year: "2020", Make: "FORD", Model: "F-150", Trim: "", Engine: "5.0L V8", Notes: "" },
    { "Part Number": "FLT-7", "Manufacturer Part": "OF-7", Brand: "Filtra", Year: "2015", Make: "TOYOTA", Model: "Corolla", Trim: "LE", Engine: "1.8L I4", Notes: "" },
  ];

  it("debug run: one row per vehicle in the debug folder, the broken product as a row error, nothing in storage", async () => {
    const r = await run(env, await sample(), { mode: "debug" });
    expect(r.error).toBeNull();
    expect(r.outcome).toBe("partial");
    expect(r.counts).toMatchObject({ rows: 3, create: 3, row_errors: 1 });
    expect(await readBack(debugSource(env, r, name))).toEqual(expected);
    const errors = await readFile(path.join(debugFolder(env, r), "errors.csv"), "utf8");
    expect(errors).toContain("g-4");
    expect(errors).toContain("fitment is not JSON");
    expect(existsSync(path.join(folder(), name))).toBe(false);
  });

  it("live run: the file appears in storage under exports/fitment, equal to the products' vehicles", async () => {
    const r = await run(env, await sample());
    expect(r.error).toBeNull();
    expect(r.outcome).toBe("partial");
    expect(await listing(folder())).toEqual([name]);
    expect(await readBack(path.join(folder(), name))).toEqual(expected);
  });

  it("a diff run after one vehicle changed delivers that row only", async () => {
    putProducts(env, [{ guid: "g-4", sku: "BAD-1", fitment: "[]" }]);
    await run(env, await sample(), { diff: false });
    putProducts(env, [{ guid: "g-2", sku: "FLT-7", fitment: vehicles([{ year: "2016", make: "Toyota", model: "Corolla", trim: "LE", engine: "1.8L I4", notes: "" }]) }]);
    const r = await run(env, await sample(), { diff: true });
    expect(r.outcome).toBe("success");
    expect(r.counts).toMatchObject({ rows: 3, create: 0, update: 1, unchanged: 2 });
    expect(await readBack(path.join(folder(), name))).toEqual([{ ...expected[2], Year: "2016" }]);
  });
});
