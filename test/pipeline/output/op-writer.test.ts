import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { ConveyorError } from "../../../src/errors.js";
import { OpFiles, type OpFilesOptions, type OpFilesResult } from "../../../src/pipeline/output/op-files.js";
import { OpPageDecoder, OpPageEncoder } from "../../../src/pipeline/output/op-pages.js";
import { opRow } from "../../../src/pipeline/output/op-rows.js";
import { OpWriter, THREAD_FROM_OPS, THREAD_FROM_SHARE } from "../../../src/pipeline/output/op-writer.js";
import { PlannedCreate, type PlannedOp } from "../../../src/pipeline/planned-op.js";
import { MASK, registerSecret } from "../../../src/secrets.js";

/** The writer thread of a product pass: what crosses to it, and what it writes. */
const folder = (): string => mkdtempSync(path.join(os.tmpdir(), "conveyor-op-writer-"));

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

/** Enough operations to start the writer's thread, whatever share of them a pass without plan.csv skips. */
const THREADED = Math.ceil(THREAD_FROM_OPS * 1.2);

const ODD = ["", "a,b", 'say "hi"', "two\nlines", "ünï ©ode €", " lead", "\u0000nul\u001fsep", "x".repeat(5000)];

function ops(count: number): PlannedOp[] {
  const out: PlannedOp[] = [];
  for (let i = 0; i < count; i++) {
    const odd = ODD[i % ODD.length] ?? "";
    // An even update's service holds its stock already when it is a multiple of 3: plan.csv says `same`.
    const same = i % 2 === 0 && i % 3 === 0;
    if (i % 7 === 3) out.push({ kind: "update", action: "edit", identifier: `U${i}`, line: i + 2, changes: [{ field: "stock", before: i % 2 ? null : same ? String(i) : "1", after: String(i), same }] });
    else if (i % 11 === 5) out.push({ kind: "remove", action: "end", identifier: `R${i}`, line: null, changes: [] });
    else if (i % 13 === 6) out.push({ kind: "skipped", action: null, identifier: `S${i}`, line: i + 2, changes: [], reason: `no update, ${odd}` });
    // The planner's creates (PlannedCreate, read from their record) and creates as plain operations, mixed.
    else if (i % 3 === 1) out.push(new PlannedCreate("add", `C${i}${odd}`, i + 2, CREATED, { guid: `C${i}${odd}`, title: `Title ${odd}`, stock: String(i) }));
    else out.push({ kind: "create", action: "add", identifier: `C${i}${odd}`, line: i + 2, changes: [{ field: "title", before: null, after: `Title ${odd}` }, { field: "stock", before: null, after: String(i) }] });
  }
  return out;
}

const CREATED: readonly string[] = ["title", "stock"];

/** Every file of a folder, by name. */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) out[name] = readFileSync(path.join(dir, name), "utf8");
  return out;
}

describe("op pages", () => {
  it("carry every operation back as it was, whatever its values hold", () => {
    const encoder = new OpPageEncoder();
    const decoder = new OpPageDecoder();
    const planned = ops(300);
    const decoded = [];
    for (const [i, op] of planned.entries()) {
      encoder.add(op);
      // Pages of uneven sizes: a column list is sent once, with the first page that uses it.
      if (i % 37 === 36) decoded.push(...decoder.rows(encoder.take()));
    }
    decoded.push(...decoder.rows(encoder.take()));
    expect(decoded).toEqual(planned.map(opRow));
  });
});

/** A small seeded generator: the same values on every run, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** ASCII values with every character the quoting rule looks at, at either end and inside. */
function asciiValue(next: () => number): string {
  const pieces = ["a", "Z", "7", " ", "\t", "\v", "\f", "\r", "\n", '"', ",", ";", "\u0000", "\u001f", "~"];
  const length = Math.floor(next() * 8);
  let value = "";
  for (let i = 0; i < length; i++) value += pieces[Math.floor(next() * pieces.length)] ?? "";
  return value;
}

describe("OpFiles", () => {
  it("writes a page as bytes exactly as it writes its operations as strings", async () => {
    const next = random(20261125);
    const planned: PlannedOp[] = [];
    // Forty columns: an operation's `same` marks take two words.
    const wide = Array.from({ length: 40 }, (_, k) => `f${k}`);
    const fieldSets = [["title", "stock"], ["stock"], ["a,b", ' "q" '], ["description"], wide];
    for (let i = 0; i < 4000; i++) {
      const fields = fieldSets[Math.floor(next() * fieldSets.length)] ?? [];
      const roll = next();
      const value = (): string => (next() < 0.002 ? "x".repeat(40_000) + asciiValue(next) : asciiValue(next));
      if (roll < 0.05) planned.push({ kind: "remove", action: "end", identifier: `R${i}`, line: null, changes: [] });
      else if (roll < 0.1) planned.push({ kind: "skipped", action: null, identifier: asciiValue(next) || `S${i}`, line: i, changes: [], reason: asciiValue(next) });
      else if (roll < 0.15) planned.push({ kind: "unchanged", action: null, identifier: `N${i}`, line: i, changes: [] });
      else if (roll < 0.5) planned.push({ kind: "update", action: "edit", identifier: `U${i}${asciiValue(next)}`, line: i, changes: fields.map((field) => ({ field, before: next() < 0.3 ? null : value(), after: value(), same: next() < 0.4 })) });
      else planned.push({ kind: "create", action: "add", identifier: `C${i}${asciiValue(next)}`, line: i, changes: fields.map((field) => ({ field, before: null, after: value() })) });
    }
    const [asBytes, asStrings] = [folder(), folder()];
    const options = (dir: string) => {
      mkdirSync(path.join(dir, "bulk"));
      return { bulkFolder: path.join(dir, "bulk"), identifierField: "sku", bulkRows: 300, planPath: path.join(dir, "plan.csv") };
    };
    const bytes = await OpFiles.open(options(asBytes));
    const encoder = new OpPageEncoder();
    for (const [i, op] of planned.entries()) {
      encoder.add(op);
      if (i % 250 === 249) await bytes.addPage(encoder.take());
    }
    await bytes.addPage(encoder.take());
    const byteFiles = await bytes.finish();
    const strings = await OpFiles.open(options(asStrings));
    for (const op of planned) await strings.add(opRow(op));
    const stringFiles = await strings.finish();

    expect(byteFiles.files.map((f) => [f.name, f.rows])).toEqual(stringFiles.files.map((f) => [f.name, f.rows]));
    expect(readFileSync(path.join(asBytes, "plan.csv"), "utf8")).toBe(readFileSync(path.join(asStrings, "plan.csv"), "utf8"));
    expect(files(path.join(asBytes, "bulk"))).toEqual(files(path.join(asStrings, "bulk")));
    // What the comparison rests on: quoted cells, doubled quotes, white space at the ends, values past a buffer.
    const plan = readFileSync(path.join(asBytes, "plan.csv"), "utf8");
    expect(plan).toMatch(/""/);
    expect(plan).toMatch(/," [^"]*"|,"\t/);
    expect(plan).toContain("x".repeat(40_000));
    expect(plan).toMatch(/^update,edit,U\d+.*,f39,.*,same\r$/m);
    expect(plan).toMatch(/^update,edit,U\d+.*,f39,.*,changed\r$/m);
  });
});

/** The operations written in process into one folder, and the options of another for the writer under test. */
async function inProcessFirst(planned: readonly PlannedOp[]): Promise<{ inProcess: string; threaded: string; options: (dir: string) => OpFilesOptions; expected: OpFilesResult }> {
  const [inProcess, threaded] = [folder(), folder()];
  for (const dir of [inProcess, threaded]) mkdirSync(path.join(dir, "bulk"));
  const options = (dir: string): OpFilesOptions => ({ bulkFolder: path.join(dir, "bulk"), identifierField: "guid", bulkRows: 700, planPath: path.join(dir, "plan.csv") });
  const local = await OpFiles.open(options(inProcess));
  for (const op of planned) await local.add(opRow(op));
  return { inProcess, threaded, options, expected: await local.finish() };
}

/** The plan and bulk files of a pass written by the writer are those written in process, byte for byte. */
function expectSameFiles(written: string, inProcess: string): void {
  expect(readFileSync(path.join(written, "plan.csv"), "utf8")).toBe(readFileSync(path.join(inProcess, "plan.csv"), "utf8"));
  expect(files(path.join(written, "bulk"))).toEqual(files(path.join(inProcess, "bulk")));
}

/** Finishes a pass the writer's thread wrote: the thread has stopped. */
async function finishOnThread(writer: OpWriter): Promise<void> {
  await writer.finish();
  expect(writer.threaded).toBe(true);
  expect(writer.threadRunning).toBe(false);
}

describe("OpWriter", () => {
  it("writes on its thread the very bytes the files are written with in process", async () => {
    const planned = ops(THREADED);
    const { inProcess, threaded, options, expected } = await inProcessFirst(planned);

    const writer = OpWriter.open(options(threaded));
    // Every row read planned a write: the thread pays.
    writer.noteRows(THREADED);
    try {
      for (const op of planned) await writer.add(op);
      expect(writer.threadRunning).toBe(true);
      const result = await writer.finish();
      expect(writer.threaded).toBe(true);
      // The apply that follows can run for minutes: the thread's heap is given back before it.
      expect(writer.threadRunning).toBe(false);
      expect(result.planned).toBe(true);
      expect(result.files.map((f) => [f.name, f.action, f.columns, f.rows])).toEqual(expected.files.map((f) => [f.name, f.action, f.columns, f.rows]));
    } finally {
      await writer.close();
    }
    expectSameFiles(threaded, inProcess);
    const plan = readFileSync(path.join(threaded, "plan.csv"), "utf8");
    expect(plan.startsWith("operation,action,identifier,field,before,after,change\r\n")).toBe(true);
    expect(plan).toContain('create,add,"C2say ""hi""",title,,"Title say ""hi""",new\r\n');
    expect(plan).toContain("update,edit,U10,stock,1,10,changed\r\n");
    expect(plan).toContain("update,edit,U24,stock,24,24,same\r\n");
    expect(plan).toContain('skipped,,S6,,,"no update, \u0000nul\u001fsep",\r\n');
    expect(plan).toContain("remove,end,R5,,,,\r\n");
  });

  it("appends to the plan of an earlier pass, and a discarded plan is cut back to it", async () => {
    const dir = folder();
    mkdirSync(path.join(dir, "bulk"));
    const planPath = path.join(dir, "plan.csv");
    const earlier = "operation,action,identifier,field,before,after,change\r\ncreate,create,O1,status,,open,new\r\n";
    writeFileSync(planPath, earlier);
    const writer = OpWriter.open({ bulkFolder: path.join(dir, "bulk"), identifierField: "guid", bulkRows: 100, planPath });
    try {
      // Enough that the thread has written part of the plan when it is discarded.
      for (const op of ops(THREADED)) await writer.add(op);
      // Its column list is first seen in the page the discard drops unsent.
      const again: PlannedOp = { kind: "create", action: "add", identifier: "A1", line: 2, changes: [{ field: "title", before: null, after: "again" }] };
      await writer.add(again);
      await writer.discard();
      await writer.add(again);
      const result = await writer.finish();
      expect(result.files.map((f) => [f.name, f.rows])).toEqual([["bulk-1.csv", 1]]);
    } finally {
      await writer.close();
    }
    expect(readFileSync(planPath, "utf8")).toBe(`${earlier}create,add,A1,title,,again,new\r\n`);
    expect(readFileSync(path.join(dir, "bulk", "bulk-1.csv"), "utf8")).toBe("action,guid,title\r\nadd,A1,again\r\n");
  });

  it("starts the thread ahead for a pass dense from its first page, and writes on that thread", async () => {
    const planned = ops(THREADED);
    const { inProcess, threaded, options } = await inProcessFirst(planned);
    const writer = OpWriter.open(options(threaded));
    try {
      const first = planned.slice(0, 1000);
      for (const op of first) await writer.add(op);
      // Two pages held, far below THREAD_FROM_OPS: the thread runs, the pages wait for the count.
      expect(writer.threadRunning).toBe(true);
      expect(writer.threaded).toBe(false);
      for (const op of planned.slice(first.length)) await writer.add(op);
      await finishOnThread(writer);
    } finally {
      await writer.close();
    }
    expectSameFiles(threaded, inProcess);
  });

  it.each([
    ["past the thread's count", THREADED],
    ["of a few pages", 1200],
    ["of less than a page", 120],
  ])("starts the thread before the first operation when asked, and writes a pass %s on it, the same bytes", async (_name, count) => {
    const planned = ops(count);
    const { inProcess, threaded, options } = await inProcessFirst(planned);
    const writer = OpWriter.open(options(threaded));
    try {
      writer.startAhead();
      expect(writer.threadRunning).toBe(true);
      for (const [i, op] of planned.entries()) {
        await writer.add(op);
        // No page is held for a count: the first full one goes to the thread.
        if (i === 600) expect(writer.threaded).toBe(true);
      }
      await finishOnThread(writer);
    } finally {
      await writer.close();
    }
    expectSameFiles(threaded, inProcess);
  });

  it.each([
    ["fewer writes than a page", 120, 0, false],
    // Dense from its first page, it has the thread started ahead, and stopped unused at the end.
    ["many pages, too few to use the thread", THREAD_FROM_OPS - 700, 0, true],
    // A nightly diff run of a large feed: its writes pass THREAD_FROM_OPS, a small share of the rows it has read.
    ["sparse writes past the thread's count", THREADED, Math.ceil(THREADED / THREAD_FROM_SHARE) + 1, false],
  ])("writes a pass of %s in process, the same bytes", async (_name, count, rowsRead, ahead) => {
    const planned = ops(count);
    const [inProcess, small] = [folder(), folder()];
    for (const dir of [inProcess, small]) mkdirSync(path.join(dir, "bulk"));
    const options = (dir: string) => ({ bulkFolder: path.join(dir, "bulk"), identifierField: "guid", bulkRows: 50, planPath: path.join(dir, "plan.csv") });
    const local = await OpFiles.open(options(inProcess));
    for (const op of planned) await local.add(opRow(op));
    const expected = await local.finish();
    const writer = OpWriter.open(options(small));
    writer.noteRows(rowsRead);
    try {
      for (const op of planned) await writer.add(op);
      expect(writer.threadRunning).toBe(ahead);
      const result = await writer.finish();
      expect(writer.threaded).toBe(false);
      expect(writer.threadRunning).toBe(false);
      expect(result.files.map((f) => [f.name, f.action, f.columns, f.rows])).toEqual(expected.files.map((f) => [f.name, f.action, f.columns, f.rows]));
    } finally {
      await writer.close();
    }
    expectSameFiles(small, inProcess);
  });

  it("keeps no piece of the feed alive through the pages it holds before the thread starts", async () => {
    const dir = folder();
    mkdirSync(path.join(dir, "bulk"));
    const writer = OpWriter.open({ bulkFolder: path.join(dir, "bulk"), identifierField: "guid", bulkRows: 1000, planPath: path.join(dir, "plan.csv") });
    try {
      gc();
      const before = process.memoryUsage().heapUsed;
      // A changed row here and there through a feed: each value a slice of its own 64 KB piece, decoded as the readers decode them.
      const decoder = new TextDecoder();
      for (let i = 0; i < 1200; i++) {
        const piece = decoder.decode(Buffer.alloc(1 << 16, 97 + (i % 26)));
        await writer.add({ kind: "update", action: "edit", identifier: `U${i}`, line: i + 2, changes: [{ field: "stock", before: null, after: piece.slice(1000, 1020) }] });
      }
      gc();
      const grown = (process.memoryUsage().heapUsed - before) / 2 ** 20;
      expect(writer.threaded).toBe(false);
      // Two full pages are held; pinned, their pieces would hold 64 MB.
      expect(grown).toBeLessThan(16);
      await writer.finish();
    } finally {
      await writer.close();
    }
    expect(readFileSync(path.join(dir, "plan.csv"), "utf8").split("\r\n").filter((l) => l.startsWith("update,edit,U")).length).toBe(1200);
  });

  it("masks a secret registered after the thread started", async () => {
    const dir = folder();
    mkdirSync(path.join(dir, "bulk"));
    const planPath = path.join(dir, "plan.csv");
    const writer = OpWriter.open({ bulkFolder: path.join(dir, "bulk"), identifierField: "guid", bulkRows: 100, planPath });
    try {
      // Enough pages first: the thread is running when the secret appears.
      for (const op of ops(THREADED)) await writer.add(op);
      expect(writer.threaded).toBe(true);
      registerSecret("late-Token-4711-xyz");
      await writer.add({ kind: "create", action: "add", identifier: "A1", line: 2, changes: [{ field: "note", before: null, after: "key late-Token-4711-xyz here" }] });
      await writer.finish();
    } finally {
      await writer.close();
    }
    const plan = readFileSync(planPath, "utf8");
    expect(plan).not.toContain("late-Token-4711-xyz");
    expect(plan).toContain(`create,add,A1,note,,key ${MASK} here,new\r\n`);
  });

  it("fails the pass with the thread's reason when it cannot write", async () => {
    const dir = folder();
    // The bulk folder is a file: the thread cannot open a bulk file in it.
    writeFileSync(path.join(dir, "bulk"), "not a folder");
    const writer = OpWriter.open({ bulkFolder: path.join(dir, "bulk"), identifierField: "guid", bulkRows: 100, planPath: null });
    try {
      const err = await (async () => {
        for (const op of ops(THREADED)) await writer.add(op);
        await writer.finish();
      })().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConveyorError);
      expect((err as ConveyorError).code).toBe("internal");
      expect((err as ConveyorError).message).toMatch(/ENOTDIR|not a directory/);
    } finally {
      await writer.close();
    }
  });

  it("fails a small pass written in process with the same reason", async () => {
    const dir = folder();
    writeFileSync(path.join(dir, "bulk"), "not a folder");
    const writer = OpWriter.open({ bulkFolder: path.join(dir, "bulk"), identifierField: "guid", bulkRows: 100, planPath: null });
    try {
      for (const op of ops(20)) await writer.add(op);
      const err = await writer.finish().catch((e: unknown) => e);
      expect(writer.threaded).toBe(false);
      expect(err).toBeInstanceOf(ConveyorError);
      expect((err as ConveyorError).code).toBe("internal");
      expect((err as ConveyorError).message).toMatch(/^Writing the bulk files failed: .*(ENOTDIR|not a directory)/);
    } finally {
      await writer.close();
    }
  });
});
