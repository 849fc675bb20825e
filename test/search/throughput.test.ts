import { describe, expect, it } from "vitest";
import { compileSearch, type SearchRecord } from "../../src/search/index.js";

/*
 * The evaluator runs once per record on feeds of a million rows. This measures
 * records per second for a realistic condition on flat records and prints it; the
 * floor is set far below the measured figure so a loaded CI machine passes, yet
 * a regression to per-record parsing or regex building (10-100x slower) fails.
 */
describe("throughput", () => {
  it("evaluates a typical condition on 200k records quickly", () => {
    const records: SearchRecord[] = [];
    for (let i = 0; i < 200_000; i += 1) {
      records.push({
        guid: `SKU-${i}`,
        stock: String(i % 50),
        price: `${(i % 1000) / 10}`,
        brand: i % 3 === 0 ? "Nike" : i % 3 === 1 ? "Adidas" : "Puma",
        condition: i % 5 === 0 ? "Used" : "New",
        title: `Running shoe model ${i}`,
        dateupdatedutc: `2026-11-${String(1 + (i % 28)).padStart(2, "0")} 08:00:00`,
        upc: i % 7 === 0 ? "" : `0${i}`,
      });
    }
    const now = new Date("2026-11-15T12:00:00Z");
    const match = compileSearch(
      'stock:>0 (brand:=Nike brand:=Adidas) condition:=New price:<=50 title:running% upc:-= dateupdatedutc:>"-7 days"',
      { now: () => now },
    );
    let hits = 0;
    const started = performance.now();
    for (const record of records) if (match(record)) hits += 1;
    const ms = performance.now() - started;
    const perSecond = Math.round(records.length / (ms / 1000));
    console.log(`search: ${records.length} records in ${ms.toFixed(0)} ms, ${perSecond} records/s, ${hits} matched`);
    expect(hits).toBeGreaterThan(0);
    expect(hits).toBeLessThan(records.length);
    expect(perSecond).toBeGreaterThan(100_000);
  });
});
