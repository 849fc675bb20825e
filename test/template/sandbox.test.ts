import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { templateProblem } from "../../src/template/compile.js";
import { sandboxedTwig } from "../../src/template/sandbox.js";

/**
 * What a template may not do: read other templates or files (twig.js's fs
 * and ajax loaders, include and friends, source()), build a template from a
 * string, or call JavaScript through a value's prototype. Each is refused at
 * check time with its position, and at render time as well.
 */
const { twig } = sandboxedTwig({ timezone: "UTC", now: () => new Date() });

function render(source: string, data: unknown = {}): string {
  return twig.twig({ data: source, rethrow: true }).render(Object.assign(Object.create(null) as Record<string, unknown>, { data, params: {} }));
}

describe("template sandbox", () => {
  let dir: string;
  let secretFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "conveyor-tpl-"));
    secretFile = path.join(dir, "secret.twig");
    await writeFile(secretFile, "TOP-SECRET-{{ 1 + 1 }}");
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("the fs and ajax loaders are unreachable, even through twig.js's own API", () => {
    expect(() => twig.twig({ path: secretFile } as unknown as { data: string })).toThrow(/cannot load other templates or files/);
    expect(() => twig.twig({ href: "http://127.0.0.1:9/x.twig" } as unknown as { data: string })).toThrow(/cannot load other templates or files/);
  });

  it.each([
    [`{% include '${"SECRET"}' %}`, "include"],
    [`{% embed 'x' %}{% endembed %}`, "embed"],
    [`{% extends 'x' %}`, "extends"],
    [`{% import 'x' as m %}`, "import"],
    [`{% from 'x' import m %}`, "from"],
    [`{% use 'x' %}`, "use"],
  ])("%s is refused at check time and cannot run", (source, tag) => {
    const text = source.replace("SECRET", secretFile);
    expect(templateProblem(`first line\n  ${text}`)).toEqual({ line: 2, column: 3, message: `{% ${tag} %} is not allowed: a template cannot read other templates or files` });
    expect(() => render(text)).toThrow();
  });

  it.each(["source", "include", "template_from_string", "attribute", "dump", "block", "parent"])("function %s() is not available", (fn) => {
    const source = `{{ ${fn}('${secretFile}') }}`;
    expect(templateProblem(source)?.message).toMatch(new RegExp(`function "${fn}" is not available`));
    expect(() => render(source)).toThrow(/does not exist/);
  });

  it("no JavaScript through a value's prototype: constructor, toString, computed keys", () => {
    for (const source of [
      "{{ data.constructor }}",
      "{{ data.list.constructor.name }}",
      "{{ data['con' ~ 'structor'] }}",
      "{{ data.toString() }}",
      "{{ data.list.map }}",
    ]) {
      expect(() => render(source, { v: "x", list: [1] }), source).toThrow(/calling a method of a value is not allowed/);
    }
    // A text has no fields: its prototype's are not read.
    expect(render("[{{ data.v.constructor }}{{ data.v.length }}]", { v: "x" })).toBe("[]");
    // The render's own variables sit in an object without a prototype.
    expect(render("[{{ _context.constructor }}]")).toBe("[]");
    // Unknown filters named like Object.prototype's methods are unknown filters.
    expect(templateProblem("{{ data|constructor }}")?.message).toMatch(/unknown filter "constructor"/);
  });

  it("ranges and batches too large to build are refused", () => {
    expect(() => render("{% for i in 1..100000000 %}{% endfor %}")).toThrow(/range\(\) of more than/);
    expect(() => render("{{ [1]|batch(100000000, 'x')|length }}")).toThrow(/batch\(\) of more than/);
    expect(() => render("{{ '%999999999s'|format('x') }}")).toThrow(/field width/);
  });

  it("syntax errors carry the template's line and column", () => {
    expect(templateProblem("<rss>\n  <item>{{ data.title | upper }</item>")).toMatchObject({ line: 2, column: 9, message: "this tag is never closed: no '}}' after it" });
    expect(templateProblem("a\n\n   {% if data.x %}open")).toEqual({ line: 3, column: 4, message: "{% if %} is never closed (add {% endif %})" });
    expect(templateProblem("{% for r in data %}\n{% endif %}")).toMatchObject({ line: 2, column: 1 });
    expect(templateProblem("x\n{{ data|nope }}")).toMatchObject({ line: 2, column: 1, message: expect.stringMatching(/unknown filter "nope"/) });
    expect(templateProblem("{% for x in %}{% endfor %}")).toMatchObject({ line: 1, column: 1 });
    expect(templateProblem("{% for r in data %}{{ r.x|e('xml') }}{% else %}none{% endfor %}")).toBeNull();
  });
});
