import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FileConfig } from "../../../src/definition/index.js";
import { TemplateRenderer } from "../../../src/pipeline/export/render-template.js";
import { caught } from "../../helpers/caught.js";

/**
 * The export pass's template renderer on its own: a streamed template over
 * more records than one batch (loop.last exact across batches), the bound on
 * a template that wants the whole list, and payload_multi 0's per-record
 * renders.
 */
const COLUMNS = ["sku", "title"];
const config = (template: string, multi = true): FileConfig => ({ template, payload_multi: multi }) as unknown as FileConfig;
const ctx = { field: "file_configs[0].template", timezone: "UTC", now: new Date("2026-01-01T00:00:00Z"), params: {} };

function items(n: number, from = 0): { record: Record<string, string>; data: Record<string, unknown> }[] {
  return Array.from({ length: n }, (_, i) => {
    const record = { sku: `S${from + i}`, title: `T "${from + i}"\n<&>` };
    return { record, data: record };
  });
}

describe("template renderer", () => {
  let dir: string;
  beforeAll(async () => (dir = await mkdtemp(path.join(tmpdir(), "conveyor-tpl-render-"))));
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("streams 1,203 records in batches: valid JSON, in order, loop.last only on the last", async () => {
    const r = await TemplateRenderer.open(dir, "all.json", config(`[{% for r in data %}{"n": {{ loop.index }}, "sku": {{ r.sku|json_encode }}, "title": {{ r.title|json_encode }}, "last": {{ loop.last ? 'true' : 'false' }}}{% if not loop.last %},{% endif %}\n{% endfor %}]`), COLUMNS, ctx);
    // The pass hands over 1,000 rows at a time; 203 arrive last.
    expect(await r.writeBatch(items(1000))).toBeNull();
    await r.writeBatch(items(203, 1000));
    const file = await r.close();
    const parsed = JSON.parse(await readFile(file.localPath, "utf8")) as { n: number; sku: string; title: string; last: boolean }[];
    expect(file.rows).toBe(1203);
    expect(parsed.map((p) => p.n)).toEqual(Array.from({ length: 1203 }, (_, i) => i + 1));
    expect(parsed.map((p) => p.sku)).toEqual(items(1203).map((i) => i.record.sku));
    expect(parsed[5]?.title).toBe(`T "5"\n<&>`);
    expect(parsed.filter((p) => p.last).map((p) => p.n)).toEqual([1203]);
    expect(file.bytes).toBe(Buffer.byteLength(await readFile(file.localPath, "utf8")));
  });

  it("a template that wants the whole list gets it up to the bound, then a clear error", async () => {
    const whole = await TemplateRenderer.open(dir, "count.txt", config("{{ data|length }}:{% for r in data|reverse %}{{ r.sku }}{% endfor %}"), COLUMNS, { ...ctx, limits: { inMemoryRecords: 5 } });
    await whole.writeBatch(items(5));
    const file = await whole.close();
    expect(await readFile(file.localPath, "utf8")).toBe("5:S4S3S2S1S0");
    const over = await TemplateRenderer.open(dir, "over.txt", config("{{ data|length }}"), COLUMNS, { ...ctx, limits: { inMemoryRecords: 5 } });
    const err = await caught(over.writeBatch(items(6)));
    await over.abort();
    expect(err.code).toBe("template");
    expect(err.message).toBe("file_configs[0].template: the template renders data as one list, which holds at most 5 records; this export has more");
    expect(err.hint).toContain("{% for r in data %}");
  });

  it("payload_multi 0: one render per record, returned for the request bodies and concatenated in the file", async () => {
    const r = await TemplateRenderer.open(dir, "each.xml", config("<i>{{ data.sku }}</i>\n", false), COLUMNS, ctx);
    expect(await r.writeBatch(items(3))).toEqual(["<i>S0</i>\n", "<i>S1</i>\n", "<i>S2</i>\n"]);
    const file = await r.close();
    expect(await readFile(file.localPath, "utf8")).toBe("<i>S0</i>\n<i>S1</i>\n<i>S2</i>\n");
  });
});
