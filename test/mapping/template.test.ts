import { describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { compileTemplate, newRecord, templateNames, type MappedRecord } from "../../src/mapping/index.js";
import type { NameResolver } from "../../src/mapping/template.js";

type Row = Record<string, string>;

function record(values: Record<string, string>): MappedRecord {
  return Object.assign(newRecord(), values);
}

/** Fields brand/model/title are mapped; anything starting with "col" is a source column. */
const resolve: NameResolver<Row> = (name) => {
  if (["brand", "model", "title", "constructor"].includes(name)) return (r) => r[name];
  if (name.startsWith("col")) return (_r, source) => source?.[name];
  return null;
};

describe("templates", () => {
  it.each([
    ["{{brand}} {{model}}", { literals: ["", " ", ""], names: ["brand", "model"] }],
    ["plain text", { literals: ["plain text"], names: [] }],
    ["{{ brand }}!", { literals: ["", "!"], names: ["brand"] }],
    ["a {{}} b", { literals: ["a {{}}", " b"], names: [] }],
    ["open {{brand", { literals: ["open {{brand"], names: [] }],
  ])("splits %j", (text, expected) => {
    expect(templateNames(text)).toEqual(expected);
  });

  it.each<[string, Record<string, string>, Row | undefined, string]>([
    ["{{brand}} {{model}}", { brand: "Acme", model: "X1" }, undefined, "Acme X1"],
    ["{{brand}}", { brand: "Acme" }, undefined, "Acme"],
    ["{{brand}}-{{colSize}}", { brand: "Acme" }, { colSize: "XL" }, "Acme-XL"],
    ["[{{model}}]", {}, undefined, "[]"],
    ["{{constructor}}", {}, undefined, ""],
    ["NOW", {}, undefined, "NOW"],
  ])("%j renders", (text, values, source, expected) => {
    expect(compileTemplate(text, resolve, "field_run.title").evaluate(record(values), source)).toBe(expected);
  });

  it("marks constants so callers skip evaluation, and keeps NOW literal", () => {
    const t = compileTemplate("NOW", resolve, "field_run.shipdate");
    expect(t.constant).toBe("NOW");
    expect(compileTemplate("{{brand}}", resolve, "x").constant).toBeUndefined();
  });

  it("fails at compile time naming every unknown placeholder", () => {
    let err: unknown;
    try {
      compileTemplate("{{brand}} {{hue}} {{size}}", resolve, "field_run.title");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConveyorError);
    const e = err as ConveyorError;
    expect(e.code).toBe("placeholder_unknown");
    expect(e.message).toBe("field_run.title: {{hue}}, {{size}} names no mapped field and no column of the file");
  });
});
