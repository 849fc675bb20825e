import { DOMParser } from "@xmldom/xmldom";
import { describe, expect, it } from "vitest";
import { sandboxedTwig } from "../../src/template/sandbox.js";

/**
 * Each filter and tag the README promises, rendered by the sandboxed twig.js
 * and its output checked; hostile values parsed back by an XML parser and by
 * JSON.parse.
 */
const NOW = new Date("2026-03-29T00:30:00Z");
const { twig } = sandboxedTwig({ timezone: "Europe/Berlin", now: () => NOW });
const HOSTILE = `Tom & "Jerry" <b>'s</b>\nline two 🚀 \u0001end`;

function render(source: string, data: unknown = {}, params: Record<string, string> = {}): string {
  return twig.twig({ data: source, rethrow: true }).render(Object.assign(Object.create(null) as Record<string, unknown>, { data, params }));
}

describe("template filters", () => {
  it("escape('xml') makes hostile text safe in elements and attributes: parsed back, the same text (less XML's forbidden controls)", () => {
    const xml = render(`<r><v a="{{ data.v|e('xml') }}">{{ data.v|escape('xml') }}</v></r>`, { v: HOSTILE });
    const doc = new DOMParser({ onError: (level, msg) => { throw new Error(`${level}: ${msg}`); } }).parseFromString(xml, "text/xml");
    const v = doc.getElementsByTagName("v")[0];
    const expected = HOSTILE.replace("\u0001", "");
    expect(v?.textContent).toBe(expected);
    // An attribute value's newline is normalized to a space by every XML parser.
    expect(v?.getAttribute("a")).toBe(expected.replace("\n", " "));
    expect(xml).toContain("&amp;");
    expect(xml).toContain("&apos;");
  });

  it("escape('html'), 'js' and 'url'", () => {
    expect(render("{{ data.v|e }}", { v: `<a href="x">&'` })).toBe("&lt;a href=&quot;x&quot;&gt;&amp;&#039;");
    expect(render("{{ data.v|e('html') }}", { v: "<" })).toBe("&lt;");
    expect(render("{{ data.v|e('js') }}", { v: `a"b\n</` })).toBe("a\\u0022b\\n\\u003C\\/");
    expect(render("{{ data.v|e('url') }}", { v: "a b&c/é" })).toBe("a%20b%26c%2F%C3%A9");
  });

  it("json_encode gives JSON that parses back to the value, escaped text included", () => {
    const out = render(`{"v": {{ data.v|json_encode }}, "list": {{ data.list|json_encode }}, "e": {{ data.v|e|json_encode }}, "n": {{ 3|json_encode }}}`, { v: HOSTILE, list: ["a", { b: "<c>" }] });
    const parsed = JSON.parse(out) as Record<string, unknown>;
    expect(parsed.v).toBe(HOSTILE);
    expect(parsed.list).toEqual(["a", { b: "<c>" }]);
    expect(parsed.e).toBe(HOSTILE.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/'/g, "&#039;"));
    expect(parsed.n).toBe(3);
  });

  it("date in the automation's zone, not the process's; a zone argument wins; 'now' is the run's clock", () => {
    expect(render("{{ data.d|date('Y-m-d H:i:s P') }}", { d: "2026-07-01T12:00:00Z" })).toBe("2026-07-01 14:00:00 +02:00");
    expect(render("{{ data.d|date('Y-m-d H:i') }}", { d: "2026-01-15 08:00" })).toBe("2026-01-15 08:00");
    expect(render("{{ data.d|date('c', 'America/New_York') }}", { d: 1767225600 })).toBe("2025-12-31T19:00:00-05:00");
    // The run's clock sits on the night Berlin moves to summer time: 00:30 UTC is 01:30 CET.
    expect(render("{{ 'now'|date('D, d M Y H:i T') }}")).toBe("Sun, 29 Mar 2026 01:30 GMT+1");
    expect(render("{{ date('2026-03-29 03:30')|date('U') }}")).toBe(String(Date.UTC(2026, 2, 29, 1, 30) / 1000));
    expect(() => render("{{ 'soon'|date('Y') }}")).toThrow(/not a date/);
  });

  it("number_format, round, upper, lower, default, join, length, slice, replace", () => {
    expect(render("{{ 1234.567|number_format(2, ',', '.') }}|{{ 1234.5|number_format }}")).toBe("1.234,57|1,235");
    expect(render("{{ 2.456|round(1) }}|{{ 2.5|round }}|{{ 2.9|round(0, 'floor') }}")).toBe("2.5|3|2");
    expect(render("{{ 'Äb'|upper }}|{{ 'ÄB'|lower }}")).toBe("ÄB|äb");
    expect(render("{{ data.none|default('n/a') }}|{{ data.v|default('n/a') }}", { v: "set" })).toBe("n/a|set");
    expect(render("{{ data.list|join(', ') }}|{{ data.list|length }}|{{ 'héllo'|length }}", { list: ["a", "b", "c"] })).toBe("a, b, c|3|5");
    expect(render("{{ 'abcdef'|slice(1, 3) }}|{{ data.list|slice(1)|join }}", { list: ["a", "b", "c"] })).toBe("bcd|bc");
    expect(render("{{ 'a-b-c'|replace({'-': '+', 'a': 'A'}) }}")).toBe("A+b+c");
  });

  it("if/else, for with loop variables, set, comments; params", () => {
    const source = [
      "{# a comment is not output #}",
      "{% set sep = ';' %}",
      "{% for r in data %}{{ loop.index }}:{{ r.sku }}{% if r.qty > 0 %}+{% else %}-{% endif %}{% if not loop.last %}{{ sep }}{% endif %}{% endfor %}",
      "{{ params['api key'] }}",
    ].join("\n");
    // As in Twig, the newline right after a tag is eaten, the one after a comment is not.
    expect(render(source, [{ sku: "A", qty: 2 }, { sku: "B", qty: 0 }], { "api key": "k-1" })).toBe("\n1:A+;2:B-k-1");
  });
});
