import { describe, expect, it } from "vitest";
import { TemplateProcess, type TemplateLimits } from "../../src/template/renderer.js";
import { caught } from "../helpers/caught.js";

/**
 * A template that never ends, renders a gigabyte or eats memory is stopped
 * with a ConveyorError `template` that names the field, and the run's own
 * process lives on (the render runs in a child process of its own).
 */
const FIELD = "file_configs[0].template";

async function renderOnce(source: string, limits: Partial<TemplateLimits>): Promise<string[]> {
  const p = await TemplateProcess.start({ source, field: FIELD, multi: false, timezone: "UTC", now: new Date(), params: {}, limits });
  try {
    return await p.request({ op: "each", records: [{ sku: "A" }] });
  } finally {
    await p.close();
  }
}

describe("template limits", () => {
  it("a loop that does not end is stopped at the time limit", async () => {
    const started = Date.now();
    const err = await caught(renderOnce("{% for i in 1..1000000 %}{% for j in 1..1000000 %}{% endfor %}{% endfor %}", { timeMs: 1000 }));
    const took = Date.now() - started;
    expect(err.code).toBe("template");
    expect(err.message).toBe(`${FIELD}: rendering took longer than 1 s and was stopped`);
    expect(err.details.field).toBe(FIELD);
    expect(took).toBeLessThan(5000);
  });

  it("a render of a gigabyte is stopped by the output limit long before it is built", async () => {
    const line = "x".repeat(1000);
    // 1,000,000 × 1,000 characters: a gigabyte if it ran to the end.
    const source = `{% for i in 1..1000 %}{% for j in 1..1000 %}${line}{% endfor %}{% endfor %}`;
    const started = Date.now();
    const err = await caught(renderOnce(source, { timeMs: 60_000, outputChars: 16 * 1024 * 1024 }));
    expect(err.code).toBe("template");
    expect(err.message).toBe(`${FIELD}: the render produced more than 16777216 characters, the limit of one render`);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("a render that runs out of its heap is stopped: the process dies, not the run", async () => {
    // 2^27 characters joined only by reference, then copied whole by upper: no output, a 128 MB text.
    const source = "{% set s = 'x' %}{% for i in 1..27 %}{% set s = s ~ s %}{% endfor %}{{ s|upper|length }}";
    const err = await caught(renderOnce(source, { timeMs: 30_000, memoryMb: 32 }));
    expect(err.code).toBe("template");
    expect(err.message).toBe(`${FIELD}: the render used more than 32 MB and was stopped`);
    expect(err.hint).toMatch(/top-level \{% for r in data %\}/);
  });

  it("a render that fails says why", async () => {
    const err = await caught(renderOnce("{{ 'soon'|date('Y') }}", {}));
    expect(err.message).toBe(`${FIELD}: date: "soon" is not a date (write an ISO date such as 2026-03-01T10:00:00Z, Unix seconds, or "now")`);
  });
});
