import { describe, expect, it } from "vitest";
import { TemplateProcess } from "../../src/template/renderer.js";
import { streamParts } from "../../src/template/stream.js";

/**
 * A `payload_multi: 1` template with a top-level loop over data renders its
 * head once, its loop body per batch of records and its tail once: the
 * output must be what one render of the whole list gives, whitespace control
 * and loop.first/loop.last included.
 */
const RECORDS = Array.from({ length: 7 }, (_, i) => ({ sku: `S${i}`, title: `Item <${i}> & "co"`, price: `${i}.5` }));

const TEMPLATES = [
  `<?xml version="1.0"?>\n<rss xmlns:g="http://base.google.com/ns/1.0">\n<channel>\n{% for p in data %}\n  <item><g:id>{{ p.sku|e('xml') }}</g:id><title>{{ p.title|e('xml') }}</title></item>\n{% endfor %}\n</channel>\n</rss>\n`,
  `[{% for r in data %}{{ r|json_encode }}{% if not loop.last %},{% endif %}{% endfor %}]`,
  `[\n  {%- for r in data -%}\n  {% if not loop.first %},{% endif %}{"n": {{ loop.index }}, "i": {{ loop.index0 }}, "sku": {{ r.sku|json_encode }}}\n  {%- endfor -%}\n]\n`,
  `{# header #}SKU;PRICE\n{% for i, r in data %}{{ i }};{{ r.sku }};{{ r.price|number_format(2, ',') }}{% if r.price > 3 %};high{% endif %}\n{% endfor %}-- end {{ params.shop }} --`,
];

async function both(source: string, batch: number): Promise<{ streamed: string; whole: string }> {
  const p = await TemplateProcess.start({ source, field: "t", multi: true, timezone: "UTC", now: new Date(), params: { shop: "S&Co" } });
  try {
    expect(p.streamed).toBe(true);
    let streamed = (await p.request({ op: "head" })).join("");
    for (let i = 0; i < RECORDS.length; i += batch) {
      const records = RECORDS.slice(i, i + batch);
      streamed += (await p.request({ op: "body", records, first: i, last: i + batch >= RECORDS.length })).join("");
    }
    streamed += (await p.request({ op: "tail" })).join("");
    const whole = (await p.request({ op: "whole", data: RECORDS })).join("");
    return { streamed, whole };
  } finally {
    await p.close();
  }
}

describe("streamed templates", () => {
  it.each(TEMPLATES.map((t, i) => [i, t] as const))("template %i: streamed in batches of 3 = one whole render", async (_, source) => {
    const { streamed, whole } = await both(source, 3);
    expect(streamed).toBe(whole);
    expect(streamed).toContain("S6");
  });

  it("what does not stream: no loop over data, a loop with else, data read outside the loop", () => {
    expect(streamParts("{{ data|length }} records")).toBeNull();
    expect(streamParts("{% for r in data %}{{ r.a }}{% else %}none{% endfor %}")).toBeNull();
    expect(streamParts("{{ data|length }}{% for r in data %}{{ r.a }}{% endfor %}")).toBeNull();
    expect(streamParts("{% if x %}{% for r in data %}{{ r.a }}{% endfor %}{% endif %}")).toBeNull();
    expect(streamParts("a{% for r in data %}{% for x in r.list %}{{ x }}{% endfor %}{% endfor %}b")).toMatchObject({ head: "a", tail: "b", valueVar: "r", keyVar: null });
  });
});
