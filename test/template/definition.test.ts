import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAutomation, resolveAutomation, type Automation } from "../../src/definition/index.js";
import { isConveyorError } from "../../src/errors.js";

/**
 * `template` in a definition: checked at parse time (and so by `conveyor
 * check` and the API) with the template's line and column, refused on
 * imports, `<<parameter>>` substituted at resolve time while Twig's own
 * `{{ }}` is left alone.
 */
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-tpl-def-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BROKEN = "<rss>\n  <channel>\n    {% for p in data %}\n      <item>{{ p.sku|e('xml') }</item>\n    {% endfor %}\n</rss>";

function definition(fileConfig: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: "Feed", active: true, schedule: "0 * * * *", type: "products", action: "export", connection: { type: "sdsftp", path: "out" }, file_configs: [{ name: "feed.xml", field_map: { sku: "sku" }, ...fileConfig }], ...extra };
}

function parsed(raw: Record<string, unknown>): Automation {
  const result = parseAutomation(raw);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.automation;
}

describe("template in a definition", () => {
  it("a syntax error is a problem at file_configs[0].template with its line and column", () => {
    const result = parseAutomation(definition({ template: BROKEN }));
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    expect(problems).toEqual([{ path: "file_configs[0].template", message: "line 4, column 13: this tag is never closed: no '}}' after it", allowed: expect.stringContaining("Twig template") as unknown }]);
  });

  it("refused on imports", () => {
    const result = parseAutomation({ ...definition({ template: "{{ data.sku }}", create: "add" }), action: "import", connection: { type: "sdsftp", path: "in" } });
    expect(result.ok ? [] : result.problems.filter((p) => p.path === "file_configs[0].template").map((p) => p.message)).toEqual([
      '"template" applies to exports only: an import reads files with format, jsonpath or xpath',
    ]);
  });

  it("<<parameter>> is substituted; {{ }} stays Twig's, even when it spells a parameter's name", () => {
    const a = parsed(definition({ template: "<feed shop=\"<<shop>>\">{% for p in data %}{{ shop }}{{ p.sku }}{% endfor %}</feed>" }, { parameters: [{ name: "shop", value: "Acme" }] }));
    const resolved = resolveAutomation(a, { runId: "r1", now: new Date() });
    expect(resolved.file_configs[0]?.template).toBe('<feed shop="Acme">{% for p in data %}{{ shop }}{{ p.sku }}{% endfor %}</feed>');
  });

  it("a parameter whose value breaks the template is reported after resolving, with the position", () => {
    // At check time the tag waits for the parameter's value; the rest of the template is checked.
    expect(parseAutomation(definition({ template: "{% if %}\n{{ data.sku|<<filter>> }}" }, { parameters: [{ name: "filter", value: "upper" }] })).ok).toBe(false);
    const a = parsed(definition({ template: "ok\n{{ data.sku|<<filter>> }}" }, { parameters: [{ name: "filter", value: "nosuch" }] }));
    let problems: unknown = null;
    try {
      resolveAutomation(a, { runId: "r1", now: new Date() });
    } catch (err) {
      if (isConveyorError(err)) problems = err.details.problems;
    }
    expect(problems).toEqual([expect.objectContaining({ path: "file_configs[0].template", message: expect.stringMatching(/^after resolving parameters: line 2, column 1: unknown filter "nosuch"/) as unknown })]);
  });

  it("conveyor check names the field, line and column, and exits 2", async () => {
    const file = path.join(dir, "broken.json");
    writeFileSync(file, JSON.stringify(definition({ template: BROKEN }), null, 2));
    const r = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(process.execPath, ["--import", "tsx", "src/cli.ts", "check", file], { env: { ...process.env, CONVEYOR_DATA_DIR: path.join(dir, "data") }, timeout: 60_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, out: stdout + stderr });
      });
    });
    expect(r.code).toBe(2);
    expect(r.out).toContain("file_configs[0].template");
    expect(r.out).toContain("line 4, column 13: this tag is never closed: no '}}' after it");
  });
});
