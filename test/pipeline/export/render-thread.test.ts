import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConveyorError } from "../../../src/errors.js";
import { openWriter } from "../../../src/formats/index.js";
import { rowHash, stageLine } from "../../../src/pipeline/export/diff.js";
import { eachRow, encodeRows } from "../../../src/pipeline/export/row-batch.js";
import { RenderThread } from "../../../src/pipeline/export/threaded-render.js";
import { automation, openExportEnv, putProducts, run, type ExportEnv } from "./export-env.js";

/**
 * A big CSV export renders on a thread of its own: the file and the staged
 * snapshot lines must be byte for byte what the main thread's writer and
 * staging make of the same rows, whatever the values hold.
 */
const COLUMNS = ["id", "title", "price", "note"];

/** Values that test the quoting, the encoding and the batch's own cutting (the unit separator is inside some). */
function values(i: number): string[] {
  const odd = ["", " lead", "trail ", 'say "hi"', "a,b", "line\r\nbreak", "tab\there", "sep\u001fin\u001evalue", "é ü 漢字 🚀", "lone \ud800 half"];
  return [`P${String(i).padStart(5, "0")}`, `Product ${i} ${odd[i % odd.length] ?? ""}`, `${(i % 500) + 0.99}`, odd[(i * 7) % odd.length] ?? ""];
}

describe("the render thread", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "render-thread-"));
  });

  it("cuts a batch back into the rows it was made of", () => {
    const rows = [{ key: "a\u001fb", values: ["x\u001f", "", "\u001ey"] }, { key: "", values: [] }, { key: "k", values: ["only"] }];
    const back: Array<[number, string, string[], string]> = [];
    eachRow(encodeRows(rows, null), (i, key, vals, joined) => back.push([i, key, vals, joined]));
    expect(back).toEqual(rows.map((row, i) => [i, row.key, row.values, row.values.join("\u001f")]));
  });

  for (const dialect of [{ delimiter: ",", enclosure: '"' }, { delimiter: ";", enclosure: "'" }]) {
    it(`writes 2,500 rows in three batches exactly as the main thread's writer (${dialect.delimiter} ${dialect.enclosure}), with or without hashes`, async () => {
      const rows = Array.from({ length: 2500 }, (_, i) => ({ key: `P${i}`, values: values(i) }));
      const mainFile = path.join(dir, `main-${dialect.delimiter}.csv`);
      const writer = await openWriter(mainFile, { format: "csv", columns: COLUMNS, ...dialect });
      await writer.writeRows?.(rows.map((r) => r.values));
      const { bytes } = await writer.close();
      const staged = rows.map((r) => stageLine(rowHash(r.values), r.key)).join("");

      for (const given of [false, true]) {
        const localPath = path.join(dir, `thread-${dialect.delimiter}-${given}.csv`);
        const stagePath = path.join(dir, `stage-${dialect.delimiter}-${given}.jsonl`);
        const thread = RenderThread.start({ localPath, columns: COLUMNS, ...dialect, stagePath });
        for (let from = 0; from < rows.length; from += 1000) {
          const batch = rows.slice(from, from + 1000);
          await thread.add(batch, given ? batch.map((r) => rowHash(r.values)) : null, `rows ${from + 1}–${from + batch.length}`);
        }
        expect(await thread.finish()).toEqual({ rows: 2500, bytes, staged: 2500 });
        expect((await readFile(localPath)).equals(await readFile(mainFile))).toBe(true);
        expect(await readFile(stagePath, "utf8")).toBe(staged);
      }
    });
  }

  it("names the rows of the batch that failed", async () => {
    const thread = RenderThread.start({ localPath: path.join(dir, "x.csv"), columns: COLUMNS, delimiter: ",", enclosure: '"', stagePath: path.join(dir, "missing", "stage.jsonl") });
    await thread.add([{ key: "P1", values: values(1) }], null, "rows 1001–2000");
    const failure = await thread.finish().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ConveyorError);
    expect(String((failure as Error).message)).toMatch(/rows 1001–2000: .*missing/);
    await thread.abort();
  });
});

describe("a multi-batch CSV export", () => {
  let env: ExportEnv;
  const N = 2500;
  beforeAll(async () => {
    env = await openExportEnv();
    putProducts(env, Array.from({ length: N }, (_, i) => ({ guid: `P${String(i).padStart(5, "0")}`, sku: `S${i}`, title: values(i)[1] ?? "", price: values(i)[2] ?? "" })));
  });
  afterAll(() => env.close());

  it("delivers what the bare writer writes of its rows, and a diff run after it finds them all unchanged", async () => {
    const a = automation({ name: "Thread export", timezone: "UTC", connection: { type: "sdsftp", path: "out" }, file_configs: [{ name: "all.csv", field_map: { guid: "id", title: "title", price: "price" } }] });
    const full = await run(env, a, { diff: false });
    expect(full.error).toBeNull();
    expect(full.counts).toMatchObject({ rows: N, create: N });

    const bare = path.join(env.dir, "bare.csv");
    const writer = await openWriter(bare, { format: "csv", columns: ["id", "title", "price"] });
    await writer.writeRows?.(Array.from({ length: N }, (_, i) => [`P${String(i).padStart(5, "0")}`, values(i)[1] ?? "", values(i)[2] ?? ""]));
    await writer.close();
    expect((await readFile(path.join(env.storageRoot, "out", "all.csv"))).equals(await readFile(bare))).toBe(true);

    const again = await run(env, a, { diff: true });
    expect(again.counts).toMatchObject({ rows: N, create: 0, update: 0, unchanged: N });
  });
});
