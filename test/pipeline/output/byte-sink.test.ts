import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ByteSink } from "../../../src/pipeline/output/byte-sink.js";

const SIZE = 64 * 1024;

describe("ByteSink", () => {
  it("gives its buffer back when it closes, so a run of many files allocates none per file", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-byte-sink-"));
    // Warm the shared spares, then count what closing 200 more sinks leaves behind.
    for (let i = 0; i < 8; i++) await (await ByteSink.open(path.join(dir, `warm-${i}.csv`), { size: SIZE, blocking: true })).close();
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 200; i++) {
      const sink = await ByteSink.open(path.join(dir, `file-${i}.csv`), { size: SIZE, blocking: true });
      await sink.write(`row ${i}\r\n`);
      await sink.close();
    }
    // A buffer dropped at each close would be 200 x 64 KB (12.5 MB) until a collection.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(2 * 1024 * 1024);
    expect(readFileSync(path.join(dir, "file-199.csv"), "utf8")).toBe("row 199\r\n");
  });

  it("writes what it buffered at close, refuses writes after, and closes once", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-byte-sink-"));
    for (const blocking of [true, false]) {
      const file = path.join(dir, `out-${String(blocking)}.csv`);
      const sink = await ByteSink.open(file, { size: SIZE, blocking });
      await sink.write("a".repeat(SIZE / 4));
      await sink.write("b\r\n");
      await sink.close();
      await sink.close();
      expect(readFileSync(file, "utf8")).toBe(`${"a".repeat(SIZE / 4)}b\r\n`);
      expect(() => sink.write("late")).toThrow(/written after it was closed/);
    }
  });
});
