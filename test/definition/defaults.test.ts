import { describe, expect, expectTypeOf, it } from "vitest";
import type { ConnectionConfig } from "../../connectors/types.js";
import { compileNamePattern, failureEnvelope, type Connection } from "../../src/definition/index.js";
import { conn, fc, orderExport, parsed, productImport, type Def } from "./helpers.js";

/** The defaults and normalizations of automations.md, one table row each. */

function file(def: Def, i = 0) {
  const f = parsed(def).file_configs[i];
  if (!f) throw new Error("no file config");
  return f;
}

describe("top-level defaults", () => {
  it("turns 1/0 into booleans and fills draft, timezone, parameters, metadata", () => {
    const a = parsed(productImport());
    expect(a).toMatchObject({ active: true, draft: false, timezone: "UTC", metadata: null });
    expect(a.parameters[0]).toEqual({ name: "sftp password", value: "not-a-real-password", encrypted: false, required: true, hidden_from_user: false });
  });
  it.each([
    ["Acme inventory", "acme-inventory"],
    ["Crème Brûlée — Feed #2!", "creme-brulee-feed-2"],
    ["!!!", "automation"],
  ])("slug of %j is %j", (name, slug) => {
    expect(parsed({ ...productImport(), name }).slug).toBe(slug);
  });
  it("keeps a given slug and normalizes cron spacing", () => {
    expect(parsed({ ...productImport(), slug: "mine", schedule: " 0  6 * * 1-5 " })).toMatchObject({ slug: "mine", schedule: "0 6 * * 1-5" });
  });
  it("accepts the published form of parameters, keyed by name", () => {
    const a = parsed({ ...productImport(), parameters: { "sftp password": { value: "x", encrypted: 0, hidden_from_user: 1, description: "d" } } });
    expect(a.parameters).toEqual([{ name: "sftp password", value: "x", encrypted: false, required: true, hidden_from_user: true, description: "d" }]);
  });
});

describe("connection defaults per type", () => {
  const cases: [string, Def, string, Partial<Connection>][] = [
    ["sftp", { type: "sftp", address: "h", username: "u", password: "p", path: "/" }, "import", { port: 22, is_key_file: false }],
    ["ftp", { type: "ftp", address: "h", username: "u", password: "p", path: "/" }, "import", { port: 21, use_pasv_address: true, ssl_ftp: false }],
    ["ftp with ssl_ftp", { type: "ftp", ssl_ftp: 1, address: "h", username: "u", password: "p", path: "/" }, "import", { port: 21, ssl_ftp: true, validate: true }],
    ["ftps", { type: "ftps", address: "h", username: "u", password: "p", path: "/" }, "import", { port: 21, implicit_tls: false, validate: true, use_pasv_address: true }],
    ["ftps implicit", { type: "ftps", implicit_tls: 1, address: "h", username: "u", password: "p", path: "/" }, "import", { port: 990, implicit_tls: true }],
    ["ftps implicit on its own port", { type: "ftps", implicit_tls: 1, port: 2990, address: "h", username: "u", password: "p", path: "/" }, "import", { port: 2990 }],
    ["http", { type: "http", address: "https://x.test", payload: {} }, "import", { method: "POST", validate: true, paginate: false }],
    ["http get", { type: "http", address: "https://x.test", payload: {}, method: "get", paginate: 1 }, "import", { method: "GET", paginate: true }],
    ["email import", { type: "email", address: "imap.x.test", username: "u", password: "p" }, "import", { port: 993, folder: "INBOX" }],
  ];
  it.each(cases)("%s", (_label, connection, action, expected) => {
    const d = action === "import" ? productImport() : orderExport();
    d.connection = connection;
    expect(parsed(d).connection).toMatchObject(expected);
  });
  it("an e-mail export has no port or folder (SMTP is the worker's)", () => {
    const c = parsed({ ...orderExport(), connection: { type: "email", address: ["a@x.test", "b@x.test"] } }).connection;
    expect(c).toEqual({ type: "email", address: ["a@x.test", "b@x.test"] });
  });
  it("drops empty keys of other types, as the service lists them", () => {
    const c = parsed({ ...orderExport(), connection: { type: "sdsftp", path: "out", address: "", password: null } }).connection;
    expect(c).toEqual({ type: "sdsftp", path: "out" });
  });
  it("is a ConnectionConfig", () => {
    expectTypeOf<Connection>().toMatchTypeOf<ConnectionConfig>();
  });
});

describe("file config defaults", () => {
  it("product import", () => {
    expect(file(productImport())).toMatchObject({
      select: "latest",
      require_file: true,
      after_import: "keep",
      min_age: 30,
      delimiter: ",",
      enclosure: '"',
      skip_lines: 0,
      jsonpath: false,
      xpath: false,
      bulk_file: false,
      remove_limit: { kind: "share", value: 0.2 },
      error_limit: { kind: "share", value: 0.1 },
      skip_all: false,
      diff_update: false,
      diff_tolerance: 0,
      vendor_actions: [],
      service_actions: [],
      payload_multi: true,
      export_empty: false,
    });
    expect(file(productImport()).format).toBeUndefined();
  });
  it("orders select new files and do not require one", () => {
    const d = productImport();
    Object.assign(d, { type: "orders" });
    fc(d).update = true;
    fc(d).field_map = { oid: "Order" };
    delete fc(d).identifier;
    expect(file(d)).toMatchObject({ select: "new", require_file: false, identifier: "oid", update: true });
  });
  it("require_file follows an explicit select", () => {
    const d = productImport();
    fc(d).select = "new";
    expect(file(d).require_file).toBe(false);
  });
  it.each([
    [true, true, true, { create: "add", update: "edit", remove: "end" }],
    ["start", "relist", "delete", { create: "start", update: "relist", remove: "delete" }],
  ])("product operations %j %j %j", (create, update, remove, expected) => {
    const d = productImport();
    Object.assign(fc(d), { create, update, remove });
    expect(file(d)).toMatchObject(expected);
  });
  it.each([
    [{ jsonpath: 1, field_map: { sku: "$.sku" } }, "json"],
    [{ xpath: 1, field_map: { sku: "sku" } }, "xml"],
    [{ bulk_file: 1, field_map: {}, update: undefined }, "bulk"],
    [{ field_map: { sku: [0, 12], stock: [12, 18] } }, "fixed"],
    [{ format: "xlsx" }, "xlsx"],
  ])("format from %j is %s", (patch, format) => {
    const d = productImport();
    Object.assign(fc(d), patch);
    expect(file(d).format).toBe(format);
  });
  it.each([
    ["\t", "\t"],
    ["\\t", "\t"],
    ["tab", "\t"],
    [";", ";"],
  ])("delimiter %j", (delimiter, expected) => {
    const d = productImport();
    fc(d).delimiter = delimiter;
    expect(file(d).delimiter).toBe(expected);
  });
  it.each([
    ["20%", { kind: "share", value: 0.2 }],
    ["12.5%", { kind: "share", value: 0.125 }],
    [500, { kind: "count", value: 500 }],
    ["500", { kind: "count", value: 500 }],
    [0, { kind: "count", value: 0 }],
  ])("remove_limit %j", (limit, expected) => {
    const d = productImport();
    fc(d).remove_limit = limit;
    expect(file(d).remove_limit).toEqual(expected);
  });
  it.each([
    ["keep", "keep"],
    ["delete", "delete"],
    ["move:processed/", { move: "processed/" }],
    [{ move: "done" }, { move: "done" }],
  ])("after_import %j", (value, expected) => {
    const d = productImport();
    fc(d).after_import = value;
    expect(file(d).after_import).toEqual(expected);
  });
  it("export: file name from the slug and format, identifier oid, no import keys needed", () => {
    expect(file(orderExport())).toMatchObject({ name: "orders-to-3pl-{{DATETIME}}.csv", identifier: "oid", search: "archived:=0" });
    const d = orderExport();
    fc(d).format = "xlsx";
    expect(file(d).name).toBe("orders-to-3pl-{{DATETIME}}.xlsx");
  });
});

describe("action rules", () => {
  it("keeps functions in written order and normalizes aliases and field lists", () => {
    const d = productImport();
    fc(d).vendor_actions = [
      { search: "stock:<1", trim: "title", ignoreField: ["price", "cost"], setValue: { stock: 0, title: "{{brand}} {{model}}" }, skip: true },
      { calculate: { price: "round(cost * 1.35 + 2, 2)" }, replace: { title: ["/\\s+/g", " "] }, truncate: { title: 80 }, prefix: { sku: "AC-" } },
    ];
    const [first, second] = file(d).vendor_actions;
    expect(first).toEqual({
      search: "stock:<1",
      functions: [
        { name: "trim", arg: ["title"] },
        { name: "ignoreValue", arg: ["price", "cost"] },
        { name: "setValue", arg: { stock: 0, title: "{{brand}} {{model}}" } },
        { name: "skip", arg: true },
      ],
    });
    expect(second?.functions.map((f) => f.name)).toEqual(["calculate", "replace", "truncate", "prefix"]);
  });
});

describe("helpers", () => {
  it("compiles import names over the whole base name", () => {
    expect(compileNamePattern("stock\\.csv").test("old_stock.csv")).toBe(false);
    expect(compileNamePattern("stock_\\d+\\.csv").test("stock_20260101.csv")).toBe(true);
    expect(compileNamePattern("/STOCK\\.csv/i").test("stock.CSV")).toBe(true);
  });
  it("renders problems in the seed's validation-failure envelope", () => {
    const env = failureEnvelope([
      { path: "schedule", message: "bad", allowed: "cron" },
      { path: "file_configs[0].create", message: "worse" },
    ]);
    expect(env).toEqual({
      results: { failed: { "0": { message: "schedule: bad (allowed: cron)", code: 1 }, "1": { message: "file_configs[0].create: worse", code: 1 } } },
    });
  });
  it("keeps connection placeholders that stand for numbers until resolution", () => {
    const d = productImport();
    conn(d).port = "<<sftp port>>";
    (d.parameters as Def[]).push({ name: "sftp port", value: "2222" });
    const a = parsed(d);
    expect(a.connection?.port).toBe(22);
    expect(a.deferred).toEqual([{ path: ["connection", "port"], template: "<<sftp port>>", kind: "number" }]);
  });
});
