import { describe, expect, it } from "vitest";
import { parseAutomation, resolveAutomation } from "../../src/definition/index.js";
import { ConveyorError } from "../../src/errors.js";
import { fc, productImport, type Def } from "./helpers.js";

// What a connection type cannot do (its spec's capabilities) is refused when the definition is read, at the field that asks for it.

function withConnection(connection: Def, afterImport: unknown): Def {
  const d = productImport();
  d.connection = connection;
  fc(d).after_import = afterImport;
  return d;
}

const HTTP = { type: "http", address: "https://feeds.example.test/stock.json", method: "GET", payload: {} };
const EMAIL = { type: "email", address: "imap.example.test", username: "feeds", password: "<<sftp password>>" };

function problems(d: Def): string[] {
  const parsed = parseAutomation(d);
  return parsed.ok ? [] : parsed.problems.map((p) => `${p.path}: ${p.message} (allowed: ${p.allowed ?? ""})`);
}

describe("capabilities", () => {
  it("refuses after_import delete or move where the type cannot do it", () => {
    expect(problems(withConnection(HTTP, "delete"))).toEqual(["file_configs[0].after_import: the http connector cannot delete (allowed: keep)"]);
    expect(problems(withConnection(EMAIL, "move:done"))).toEqual(["file_configs[0].after_import: the e-mail connector cannot move (allowed: keep)"]);
    expect(problems(withConnection(EMAIL, { move: "done" }))).toEqual(["file_configs[0].after_import: the e-mail connector cannot move (allowed: keep)"]);
    expect(problems(withConnection(HTTP, "keep"))).toEqual([]);
    expect(problems(withConnection({ type: "sdsftp", path: "in" }, "delete"))).toEqual([]);
  });

  it("checks an after_import given by a parameter once it is resolved", () => {
    const d = withConnection(HTTP, "<<after>>");
    d.parameters = [{ name: "after", value: "delete" }];
    const parsed = parseAutomation(d);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const err = (() => {
      try {
        resolveAutomation(parsed.automation, { runId: "r1", now: new Date() });
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(ConveyorError);
    expect((err as ConveyorError).code).toBe("definition_invalid");
    expect((err as ConveyorError).message).toContain("file_configs[0].after_import: after resolving parameters: the http connector cannot delete");
  });
});
