import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bulkIdentifiers } from "../../../src/pipeline/import/apply-products.js";
import { BulkBatcher } from "../../../src/pipeline/output/bulk-batcher.js";
import { ByteSink } from "../../../src/pipeline/output/byte-sink.js";
import { csvCell } from "../../../src/pipeline/output/csv-cell.js";
import { DebugFiles } from "../../../src/pipeline/debug-files.js";
import { opRow } from "../../../src/pipeline/output/op-rows.js";
import type { PlannedOp } from "../../../src/pipeline/planned-op.js";
import { hasSecret, MASK, registerSecret, secretCount } from "../../../src/secrets.js";

/** The files a run writes per record: plan.csv lines, bulk file groups, and the byte sink under both. */
const folder = (): string => mkdtempSync(path.join(os.tmpdir(), "conveyor-plan-files-"));

function create(identifier: string, values: Record<string, string>): PlannedOp {
  return { kind: "create", action: "add", identifier, line: 2, changes: Object.entries(values).map(([field, after]) => ({ field, before: null, after })) };
}

describe("ByteSink", () => {
  it("writes every piece in order across many flushes of buffers shared between sinks", async () => {
    const dir = folder();
    // 64-byte buffers flush every few pieces, so buffers go to the disk and come back, to either sink, many times.
    const sinks = [await ByteSink.open(path.join(dir, "a.txt"), { size: 64 }), await ByteSink.open(path.join(dir, "b.txt"), { size: 64 })];
    const expected: string[][] = [[], []];
    for (let i = 0; i < 5000; i++) {
      const which = i % 3 === 0 ? 1 : 0;
      const piece = `${which}/${i}:${"ü€".repeat(i % 7)}|`;
      expected[which]?.push(piece);
      const waiting = sinks[which]?.write(piece);
      if (waiting) await waiting;
    }
    // Longer than the buffer: written on its own.
    const long = "x".repeat(500);
    expected[0]?.push(long);
    await sinks[0]?.write(long);
    for (const sink of sinks) await sink.close();
    expect(readFileSync(path.join(dir, "a.txt"), "utf8")).toBe(expected[0]?.join(""));
    expect(readFileSync(path.join(dir, "b.txt"), "utf8")).toBe(expected[1]?.join(""));
  });
});

describe("plan.csv", () => {
  it("masks every value of an operation that holds a secret, and only that operation's", async () => {
    registerSecret("supplier-Tok-77-secret");
    expect(hasSecret("the key is supplier-Tok-77-secret!")).toBe(true);
    expect(hasSecret("nothing here")).toBe(false);
    // A global pattern must not carry its position from one test to the next.
    expect(hasSecret("supplier-Tok-77-secret")).toBe(true);
    expect(hasSecret("supplier-Tok-77-secret")).toBe(true);

    const dir = folder();
    const debug = await DebugFiles.open(dir, 10, true);
    await debug.addPlan(create("A1", { title: "Plain, with a comma", note: "ok" }));
    await debug.addPlan(create("A2", { title: "leaks supplier-Tok-77-secret here", note: 'say "hi"' }));
    await debug.finish();
    const text = readFileSync(path.join(dir, "plan.csv"), "utf8");
    expect(text).not.toContain("supplier-Tok-77-secret");
    expect(text.split("\r\n")).toEqual([
      "operation,action,identifier,field,before,after,change",
      'create,add,A1,title,,"Plain, with a comma",new',
      "create,add,A1,note,,ok,new",
      `create,add,A2,title,,leaks ${MASK} here,new`,
      'create,add,A2,note,,"say ""hi""",new',
      "",
    ]);
  });
});

describe("BulkBatcher", () => {
  it("keeps one file per action and column set, however the operations interleave", async () => {
    const dir = folder();
    const batcher = new BulkBatcher(dir, "guid", 3);
    const ops: PlannedOp[] = [
      create("1", { title: "a", price: "1" }),
      create("2", { title: "b", price: "2" }),
      create("3", { price: "3", title: "c" }),
      { kind: "update", action: "edit", identifier: "4", line: 5, changes: [{ field: "title", before: "x", after: "d" }, { field: "price", before: "1", after: "4" }] },
      create("5", { title: "e", price: "5" }),
      create("6", { title: "f", price: "6" }),
      create("7", { title: "g" }),
    ];
    for (const op of ops) await batcher.add(opRow(op), op.changes.map((c) => csvCell(c.after)));
    const files = await batcher.finish();
    const summary = await Promise.all(files.map(async (f) => ({ action: f.action, columns: f.columns, ids: await bulkIdentifiers(f) })));
    expect(summary).toEqual([
      { action: "add", columns: ["title", "price"], ids: ["1", "2", "5"] },
      { action: "add", columns: ["price", "title"], ids: ["3"] },
      { action: "edit", columns: ["title", "price"], ids: ["4"] },
      { action: "add", columns: ["title", "price"], ids: ["6"] },
      { action: "add", columns: ["title"], ids: ["7"] },
    ]);
    expect(readFileSync(files[1]?.path ?? "", "utf8")).toBe("action,guid,price,title\r\nadd,3,3,c\r\n");
  });

  it("searches each file for the run's secrets as it seals it, when asked to", async () => {
    const secret = "sealed-secret-5151";
    registerSecret(secret);
    const dir = folder();
    const batcher = new BulkBatcher(dir, "guid", 2, { searchSealed: true });
    const ops = [create("1", { title: "a" }), create("2", { title: `x${secret}y` }), create("3", { title: "c" })];
    for (const op of ops) await batcher.add(opRow(op), op.changes.map((c) => csvCell(c.after)));
    const files = await batcher.finish();
    expect(files.map((f) => f.searched)).toEqual([
      { secrets: secretCount(), found: true },
      { secrets: secretCount(), found: false },
    ]);
    const unsearched = new BulkBatcher(folder(), "guid", 2);
    await unsearched.add(opRow(create("4", { title: secret })), [secret]);
    expect((await unsearched.finish())[0]?.searched).toBeUndefined();
  });
});
