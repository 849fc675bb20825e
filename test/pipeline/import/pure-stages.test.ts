import { describe, expect, it } from "vitest";
import type { RemoteFile } from "../../../connectors/types.js";
import { changedFields, sameValue } from "../../../src/pipeline/import/diff.js";
import { checkGuards, type GuardInput } from "../../../src/pipeline/import/guards.js";
import { selectFiles } from "../../../src/pipeline/import/select.js";
import { compileNamePattern } from "../../../src/definition/index.js";

const NOW = Date.parse("2026-11-21T12:00:00Z");
const file = (name: string, ageSeconds: number | null, size = 10): RemoteFile => ({
  name,
  path: name,
  size,
  modified: ageSeconds === null ? null : new Date(NOW - ageSeconds * 1000),
});

describe("selectFiles", () => {
  const files = [file("inventory_1.csv", 3600), file("inventory_2.csv", 600), file("inventory_3.csv", 5), file("readme.txt", 9000)];
  const base = { files, name: compileNamePattern("inventory_\\d+\\.csv"), minAgeSeconds: 30, now: NOW, processed: () => false };

  it("latest: the newest file old enough, with a reason for every other", () => {
    const r = selectFiles({ ...base, select: "latest" });
    expect(r.picked.map((f) => f.name)).toEqual(["inventory_2.csv"]);
    expect(Object.fromEntries(r.skipped.map((s) => [s.file.name, s.reason]))).toEqual({
      "readme.txt": "no match",
      "inventory_1.csv": "not the latest",
      "inventory_3.csv": "too young",
    });
  });

  it("new: every unprocessed file, oldest first", () => {
    const r = selectFiles({ ...base, select: "new", processed: (f) => f.name === "inventory_1.csv" });
    expect(r.picked.map((f) => f.name)).toEqual(["inventory_2.csv"]);
    expect(r.skipped.find((s) => s.file.name === "inventory_1.csv")?.reason).toBe("already processed");
  });

  it("all: every matching file old enough", () => {
    expect(selectFiles({ ...base, select: "all" }).picked.map((f) => f.name)).toEqual(["inventory_1.csv", "inventory_2.csv"]);
  });

  it("a young file that is the only candidate is waited for, not skipped", () => {
    const r = selectFiles({ ...base, files: [file("inventory_9.csv", 3)], select: "latest" });
    expect(r.picked).toEqual([]);
    expect(r.young.map((f) => f.name)).toEqual(["inventory_9.csv"]);
  });

  it("matches the whole base name, and /…/i is case-insensitive", () => {
    expect(compileNamePattern("stock.csv")?.test("old-stock.csv")).toBe(false);
    expect(compileNamePattern("/STOCK\\.csv/i")?.test("stock.csv")).toBe(true);
  });

  it("listings without times are judged old enough", () => {
    expect(selectFiles({ ...base, files: [file("inventory_1.csv", null)], select: "latest" }).picked).toHaveLength(1);
  });
});

describe("diff", () => {
  it("compares trimmed text and numbers within a tolerance, identifiers stay text", () => {
    expect(sameValue(" a ", "a")).toBe(true);
    expect(sameValue("10.00", "10")).toBe(true);
    expect(sameValue("10.004", "10", 0.01)).toBe(true);
    expect(sameValue("10.5", "10", 0.01)).toBe(false);
    expect(sameValue("713752E1", "7137520")).toBe(false);
    expect(sameValue("", null)).toBe(true);
  });

  it("run diff keeps only fields that changed since the snapshot", () => {
    const changes = changedFields({ stock: "5", cost: "2.50" }, ["stock", "cost"], { snapshot: { stock: "5", cost: "2.40" } });
    expect(changes).toEqual([{ field: "cost", before: "2.40", after: "2.50", same: false }]);
  });

  it("live diff compares diff_fields with the service; uncompared fields ride along only with a change", () => {
    const live = { values: { stock: "5", price: "9.99", title: "Old" }, fields: new Set(["stock", "price"]), tolerance: 0.01 };
    expect(changedFields({ stock: "5", price: "9.995", title: "New" }, ["stock", "price", "title"], { live })).toEqual([]);
    expect(changedFields({ stock: "6", price: "9.99", title: "New" }, ["stock", "price", "title"], { live, before: live.values })).toEqual([
      { field: "stock", before: "5", after: "6", same: false },
      { field: "title", before: "Old", after: "New", same: false },
    ]);
  });

  it("marks a field whose value the service holds already as the same, and run diff drops it", () => {
    const service = { stock: "148", cost: "3.10", title: " Bolt " };
    const values = { stock: "148", cost: "3.42", title: "Bolt", brand: "Acme" };
    const fields = ["stock", "cost", "title", "brand"];
    // A full run sends every field: the service's own values are marked, one it has no value for is not.
    expect(changedFields(values, fields, { before: service })).toEqual([
      { field: "stock", before: "148", after: "148", same: true },
      { field: "cost", before: "3.10", after: "3.42", same: false },
      { field: "title", before: " Bolt ", after: "Bolt", same: true },
      { field: "brand", before: null, after: "Acme", same: false },
    ]);
    // A run diff drops them, as it drops what equals the snapshot: a record with nothing else left is unchanged.
    expect(changedFields(values, fields, { before: service, snapshot: { brand: "Acme" }, dropSame: true })).toEqual([{ field: "cost", before: "3.10", after: "3.42", same: false }]);
    expect(changedFields({ stock: "148.0" }, ["stock"], { before: service, snapshot: {}, dropSame: true })).toEqual([]);
  });
});

describe("guards", () => {
  const base: GuardInput = {
    rows: 100, rowErrors: 0, removals: 0, scopeSize: 100, removeConfigured: true,
    removeLimit: { kind: "share", value: 0.2 }, errorLimit: { kind: "share", value: 0.1 }, force: false,
  };

  it("an empty feed with remove stops, even forced", () => {
    const trip = checkGuards({ ...base, rows: 0, force: true });
    expect(trip?.name).toBe("empty_feed");
    expect(trip?.forceable).toBe(false);
  });

  it("removals over remove_limit stop unless forced, with the numbers and how to force", () => {
    const trip = checkGuards({ ...base, removals: 60 });
    expect(trip?.name).toBe("remove_limit");
    expect(trip?.message).toContain("60 of 100");
    expect(trip?.message).toContain("--force");
    expect(checkGuards({ ...base, removals: 60, force: true })).toBeNull();
    expect(checkGuards({ ...base, removals: 20 })).toBeNull();
    expect(checkGuards({ ...base, removals: 6, removeLimit: { kind: "count", value: 5 } })?.name).toBe("remove_limit");
  });

  it("a file that ends inside a bad record stops a run with remove, unless forced", () => {
    const trip = checkGuards({ ...base, rowErrors: 1, removals: 2, cutAt: "feed.csv, line 98" });
    expect(trip?.name).toBe("cut_feed");
    expect(trip?.message).toContain("feed.csv, line 98");
    expect(trip?.message).toContain("--force");
    expect(checkGuards({ ...base, rowErrors: 1, removals: 2, cutAt: "feed.csv, line 98", force: true })).toBeNull();
    expect(checkGuards({ ...base, rowErrors: 1, cutAt: "feed.csv, line 98", removeConfigured: false })).toBeNull();
  });

  it("row errors over error_limit stop unless forced", () => {
    const trip = checkGuards({ ...base, rowErrors: 20 });
    expect(trip?.name).toBe("error_limit");
    expect(trip?.message).toContain("20 of 100 rows (20%)");
    expect(checkGuards({ ...base, rowErrors: 10 })).toBeNull();
    expect(checkGuards({ ...base, rowErrors: 20, force: true })).toBeNull();
  });
});
