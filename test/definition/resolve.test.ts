import { describe, expect, it } from "vitest";
import { encryptValue, maskAutomation, renderTokens, resolveAutomation, type Automation } from "../../src/definition/index.js";
import { ConveyorError } from "../../src/errors.js";
import { maskDeep, MASK } from "../../src/secrets.js";
import { conn, fc, orderExport, parsed, productImport, type Def } from "./helpers.js";

/** Parameters, placeholders and run-time tokens (automations.md, "Parameters and placeholders"). */

const NOW = new Date("2026-03-29T00:30:05Z");
const ctx = { runId: "run-42", now: NOW };

function errorOf(fn: () => unknown): ConveyorError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConveyorError) return err;
    throw err;
  }
  throw new Error("expected an error");
}

function withParams(def: Def, params: Def[]): Automation {
  return parsed({ ...def, parameters: params });
}

describe("renderTokens", () => {
  it.each([
    ["UTC", "{{DATE}} {{DATETIME}}", "2026-03-29 20260329-003005"],
    ["America/New_York", "{{DATE}} {{DATETIME}}", "2026-03-28 20260328-203005"],
    ["Europe/Berlin", "{{DATETIME}}", "20260329-013005"],
    ["UTC", "{{TIMESTAMP}}/{{RUN_ID}}", `${Math.floor(NOW.getTime() / 1000)}/run-42`],
    ["UTC", "{{sku}} <<x>>", "{{sku}} <<x>>"],
  ])("in %s: %s", (timezone, text, expected) => {
    expect(renderTokens(text, { ...ctx, timezone })).toBe(expected);
  });
});

describe("resolveAutomation", () => {
  it("fills both spellings, names with spaces, everywhere a string is", () => {
    const d = productImport();
    Object.assign(conn(d), { address: "{{sftp host}}", username: "<< sftp user >>", path: "/out/<<region>>" });
    Object.assign(fc(d), { search: "vendor:=<<vendor code>>", field_map: { sku: "<<sku column>>", stock: "Qty" } });
    const a = withParams(d, [
      { name: "sftp host", value: "sftp.acme.test" },
      { name: "sftp user", value: "acme" },
      { name: "sftp password", value: "pw-123456" },
      { name: "region", value: "eu" },
      { name: "vendor code", value: 42 },
      { name: "sku column", value: "Item Number" },
    ]);
    const r = resolveAutomation(a, ctx);
    expect(r.connection).toMatchObject({ address: "sftp.acme.test", username: "acme", password: "pw-123456", path: "/out/eu" });
    expect(r.file_configs[0]).toMatchObject({ search: "vendor:=42", field_map: { sku: "Item Number", stock: "Qty" } });
    expect(r.parameters).toEqual(a.parameters);
  });

  it("renders tokens in the automation's time zone, export names included", () => {
    const d = orderExport();
    Object.assign(d, { timezone: "America/New_York" });
    fc(d).name = "orders-{{DATE}}-{{RUN_ID}}.csv";
    expect(resolveAutomation(parsed(d), ctx).file_configs[0]?.name).toBe("orders-2026-03-28-run-42.csv");
    expect(resolveAutomation(parsed(orderExport()), ctx).file_configs[0]?.name).toBe("orders-to-3pl-20260329-003005.csv");
  });

  it("leaves record references in field_run and setValue for the mapper, and resolves parameters and tokens beside them", () => {
    const d = productImport();
    fc(d).field_run = { title: "{{brand}} {{model}}", note: "feed of {{DATE}} by <<sftp password>>" };
    fc(d).vendor_actions = [{ setValue: { cost: "{{price}}", stamp: "{{RUN_ID}}" } }];
    const r = resolveAutomation(parsed(d), ctx);
    expect(r.file_configs[0]?.field_run).toEqual({ title: "{{brand}} {{model}}", note: "feed of 2026-03-29 by not-a-real-password" });
    expect(r.file_configs[0]?.vendor_actions[0]?.functions[0]).toEqual({ name: "setValue", arg: { cost: "{{price}}", stamp: "run-42" } });
  });

  it("reports every missing or empty required parameter in one error", () => {
    const d = productImport();
    Object.assign(conn(d), { address: "<<host>>", username: "<<user>>" });
    const a = withParams(d, [
      { name: "host", value: "" },
      { name: "user", value: null },
      { name: "sftp password", value: "   " },
      { name: "optional note", value: "", required: false },
    ]);
    const err = errorOf(() => resolveAutomation(a, ctx));
    expect(err.code).toBe("parameter_missing");
    expect(err.details.parameters).toEqual(["host", "user", "sftp password"]);
    expect(err.message).toContain('"host", "user", "sftp password"');
  });

  it("names a leftover placeholder and where it is", () => {
    const a = parsed(productImport());
    const broken: Automation = { ...a, connection: { ...(a.connection ?? { type: "sftp" }), path: "/in/<<folder>>/{{WEEK}}" } };
    const err = errorOf(() => resolveAutomation(broken, ctx));
    expect(err.code).toBe("placeholder_unknown");
    expect(err.message).toContain("<<folder>> (in connection.path)");
    expect(err.message).toContain("{{WEEK}}");
  });

  it("types number and boolean fields given as placeholders", () => {
    const d = productImport();
    Object.assign(conn(d), { port: "<<sftp port>>" });
    Object.assign(fc(d), { min_age: "{{min age}}", remove_limit: "<<limit>>", diff_update: "<<diff>>" });
    const a = withParams(d, [
      { name: "sftp password", value: "pw-123456" },
      { name: "sftp port", value: "2222" },
      { name: "min age", value: 0 },
      { name: "limit", value: "5%" },
      { name: "diff", value: "1" },
    ]);
    const r = resolveAutomation(a, ctx);
    expect(r.connection?.port).toBe(2222);
    expect(r.file_configs[0]).toMatchObject({ min_age: 0, remove_limit: { kind: "share", value: 0.05 }, diff_update: true });
    expect(r.deferred).toBeUndefined();
  });

  it("takes placeholders in keys with a fixed set of values, checked and normalized once resolved", () => {
    const d = productImport();
    Object.assign(fc(d), { delimiter: "<<delimiter>>", enclosure: "{{quote}}", encoding: "<<charset>>", select: "<<select>>", after_import: "<<after>>", remove: "<<remove action>>" });
    const params = (values: Record<string, string>): Def[] => [{ name: "sftp password", value: "pw-123456" }, ...Object.entries(values).map(([name, value]) => ({ name, value, required: false }))];
    const good = { delimiter: "tab", quote: "'", charset: "windows-1252", select: "new", after: "move:done", "remove action": "delete" };
    const r = resolveAutomation(withParams(d, params(good)), ctx);
    expect(r.file_configs[0]).toMatchObject({ delimiter: "\t", enclosure: "'", encoding: "windows-1252", select: "new", after_import: { move: "done" }, remove: "delete" });
    // An operation whose parameter is true takes the safe choice; an empty one is not set.
    expect(resolveAutomation(withParams(d, params({ ...good, "remove action": "true" })), ctx).file_configs[0]?.remove).toBe("end");
    expect(resolveAutomation(withParams(d, params({ ...good, "remove action": "" })), ctx).file_configs[0]?.remove).toBeUndefined();
    const err = errorOf(() => resolveAutomation(withParams(d, params({ ...good, delimiter: ";;", select: "oldest", "remove action": "purge" })), ctx));
    const problems = err.details.problems as { path: string; message: string }[];
    expect(problems.map((p) => p.path).sort()).toEqual(["file_configs[0].delimiter", "file_configs[0].remove", "file_configs[0].select"]);
    expect(problems.find((p) => p.path.endsWith("remove"))?.message).toContain('"purge" is not a product remove action (allowed: end, delete, or true)');
  });

  it("re-checks what a placeholder hid: a port that is no number, a search that does not parse", () => {
    const d = productImport();
    Object.assign(conn(d), { port: "<<sftp port>>" });
    fc(d).search = "<<scope>>";
    const a = withParams(d, [
      { name: "sftp password", value: "pw" },
      { name: "sftp port", value: "twenty-two" },
      { name: "scope", value: "(brand:=Acme" },
    ]);
    const err = errorOf(() => resolveAutomation(a, ctx));
    expect(err.code).toBe("definition_invalid");
    const paths = (err.details.problems as { path: string }[]).map((p) => p.path);
    expect(paths).toEqual(["connection.port", "file_configs[0].search"]);
  });

  it("decrypts encrypted parameters, and refuses them without the key", () => {
    const key = Buffer.alloc(32, 7);
    const d = productImport();
    const a = withParams(d, [{ name: "sftp password", value: encryptValue("very-secret-pw", key), encrypted: true }]);
    expect(resolveAutomation(a, { ...ctx, secretKey: key }).connection?.password).toBe("very-secret-pw");
    expect(errorOf(() => resolveAutomation(a, ctx)).code).toBe("secret_key");
    // Registered the moment it was read: any later text that carries it is masked.
    expect(maskDeep({ note: "pw very-secret-pw" })).toEqual({ note: `pw ${MASK}` });
  });
});

describe("maskAutomation", () => {
  it("masks passwords, passphrases, client secrets, encrypted values and the parameters feeding secrets", () => {
    const key = Buffer.alloc(32, 9);
    const stored = encryptValue("token-abcdef", key);
    const d = productImport();
    Object.assign(conn(d), { is_key_file: 1, passphrase: "<<key phrase>>" });
    const a = withParams(d, [
      { name: "sftp password", value: "-----BEGIN OPENSSH PRIVATE KEY-----x" },
      { name: "key phrase", value: "phrase-123" },
      { name: "api token", value: stored, encrypted: true },
      { name: "region", value: "eu" },
    ]);
    for (const shown of [maskAutomation(a), maskAutomation(resolveAutomation(a, { ...ctx, secretKey: key }))]) {
      const text = JSON.stringify(shown);
      expect(shown.connection).toMatchObject({ password: MASK, passphrase: MASK });
      expect(shown.parameters.map((p) => p.value)).toEqual([MASK, MASK, MASK, "eu"]);
      for (const secret of ["OPENSSH", "phrase-123", "token-abcdef", stored]) expect(text).not.toContain(secret);
    }
  });

  it("masks an oauth client secret and secret headers of an http connection", () => {
    const a = parsed({
      ...productImport(),
      connection: {
        type: "http",
        address: "https://api.test/items",
        payload: {},
        headers: { Authorization: "Bearer abc-123456", "X-Shop-Key": "<<shop key>>", Accept: "application/json" },
        oauth: { address: "https://id.test/token", client_id: "cid", client_secret: "cs-999999" },
      },
      parameters: [{ name: "shop key", value: "shop-key-8080" }],
    });
    const shown = maskAutomation(a);
    expect(shown.connection?.oauth?.client_secret).toBe(MASK);
    expect(shown.connection?.headers).toEqual({ Authorization: MASK, "X-Shop-Key": MASK, Accept: "application/json" });
    // The parameter feeding a secret header is a secret too, though not marked encrypted.
    expect(shown.parameters.map((p) => p.value)).toEqual([MASK]);
  });
});
