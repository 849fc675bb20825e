import vm from "node:vm";
import v8 from "node:v8";
import { describe, expect, it } from "vitest";
import { LogWriter } from "../../src/pipeline/logs.js";
import type { StateStore } from "../../src/state/index.js";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

/** A store the writer never reaches: fewer records than one batch stay in its buffer. */
const unused = new Proxy({} as StateStore, {
  get: () => {
    throw new Error("the writer wrote before a batch was full");
  },
});

describe("LogWriter", () => {
  it("keeps no piece of the feed alive through the identifiers it holds", () => {
    const writer = new LogWriter(unused, { runId: "r1", account: "demo", integration: "", operation: "import", type: "item" });
    gc();
    const before = process.memoryUsage().heapUsed;
    // 800 pieces of feed of 64 KB, decoded as the readers decode them, one skipped row each: the identifiers are slices of them.
    const decoder = new TextDecoder();
    for (let i = 0; i < 800; i++) {
      const piece = decoder.decode(Buffer.alloc(1 << 16, 97 + (i % 26)));
      writer.add({ action: "skip", identifier: piece.slice(1000, 1020), result: "warning", message: { reason: "skipped by vendor_actions[0]" } });
    }
    gc();
    const grown = (process.memoryUsage().heapUsed - before) / 2 ** 20;
    // Pinned, the pieces would hold 50 MB.
    expect(grown).toBeLessThan(10);
    // The writer must be live until the measurement: it holds the records.
    expect(writer.written).toBe(0);
  });
});
