import { describe, expect, it } from "vitest";
import { conn, fc, orderExport, problemsOf, productImport, type Def } from "./helpers.js";

/** Every rule of automations.md: one mistake in an otherwise valid definition gives exactly one problem, at its path. */

function orderImport(): Def {
  return {
    name: "Tracking",
    active: true,
    schedule: "0 * * * *",
    type: "orders",
    action: "import",
    connection: { type: "sds3", path: "tracking" },
    file_configs: [{ field_map: { oid: "Order", "shipments.shiptracking": "Tracking" }, update: true }],
  };
}

function httpImport(): Def {
  return {
    name: "API",
    active: true,
    schedule: "0 * * * *",
    type: "products",
    action: "import",
    connection: { type: "http", address: "https://api.example.test/products", payload: {} },
    file_configs: [{ jsonpath: 1, field_map: { guid: "$.id" }, update: "edit" }],
  };
}

type Case = [string, () => Def, string, RegExp];

const cases: Case[] = [
  // top level
  ["name missing", () => ({ ...productImport(), name: undefined }), "name", /required/],
  ["name too long", () => ({ ...productImport(), name: "x".repeat(256) }), "name", /255/],
  ["active not boolean", () => ({ ...productImport(), active: "yes" }), "active", /not a boolean/],
  ["active missing", () => ({ ...productImport(), active: undefined }), "active", /required/],
  ["minute out of range", () => ({ ...productImport(), schedule: "61 * * * *" }), "schedule", /minute field/],
  ["four cron fields", () => ({ ...productImport(), schedule: "* * * *" }), "schedule", /5 fields/],
  ["month name", () => ({ ...productImport(), schedule: "0 0 * JAN *" }), "schedule", /month field/],
  ["step zero", () => ({ ...productImport(), schedule: "*/0 * * * *" }), "schedule", /step/],
  ["backwards range", () => ({ ...productImport(), schedule: "0 5-1 * * *" }), "schedule", /backwards/],
  ["day of week 8", () => ({ ...productImport(), schedule: "0 0 * * 8" }), "schedule", /day of week/],
  ["unknown time zone", () => ({ ...productImport(), timezone: "Mars/Base" }), "timezone", /IANA/],
  ["unknown type", () => ({ ...productImport(), type: "items" }), "type", /not allowed/],
  ["unknown action", () => ({ ...productImport(), action: "sync" }), "action", /not allowed/],
  ["fitment import", () => ({ ...productImport(), type: "fitment" }), "type", /exports only/],
  ["bad slug", () => ({ ...productImport(), slug: "Bad Slug" }), "slug", /lower-case/],
  ["unknown top-level key", () => ({ ...productImport(), colour: "red" }), "colour", /unknown key/],
  ["no file configs", () => ({ ...productImport(), file_configs: [] }), "file_configs", /at least one/],
  ["metadata not an object", () => ({ ...productImport(), metadata: "x" }), "metadata", /object|record/i],
  // connection
  ["unknown connection type", () => ({ ...productImport(), connection: { type: "scp", path: "/" } }), "connection.type", /not allowed/],
  ["sftp without password", () => { const d = productImport(); delete conn(d).password; return d; }, "connection.password", /required/],
  ["port out of range", () => { const d = productImport(); conn(d).port = 70000; return d; }, "connection.port", /1 to 65535/],
  ["implicit_tls on ftp", () => ({ ...productImport(), connection: { type: "ftp", address: "h", username: "u", password: "p", path: "/", implicit_tls: true } }), "connection.implicit_tls", /does not apply/],
  ["key file without key", () => { const d = productImport(); conn(d).is_key_file = 1; delete conn(d).password; return d; }, "connection.password", /private key/],
  ["ssl_ftp on sftp", () => { const d = productImport(); conn(d).ssl_ftp = 1; return d; }, "connection.ssl_ftp", /does not apply/],
  ["http import without payload", () => { const d = httpImport(); delete conn(d).payload; return d; }, "connection.payload", /required/],
  ["http address not a URL", () => { const d = httpImport(); conn(d).address = "api.example.test"; return d; }, "connection.address", /not a URL/],
  ["address list on sftp", () => { const d = productImport(); conn(d).address = ["a", "b"]; return d; }, "connection.address", /recipients/],
  ["folder on an e-mail export", () => ({ ...orderExport(), connection: { type: "email", address: ["ops@example.test"], folder: "INBOX" } }), "connection.folder", /imports only/],
  ["sdsftp without path", () => ({ ...orderExport(), connection: { type: "sdsftp" } }), "connection.path", /required/],
  ["bad host key", () => { const d = productImport(); conn(d).host_key = "md5:aa"; return d; }, "connection.host_key", /SHA256/],
  ["unknown connection key", () => { const d = productImport(); conn(d).hostname = "x"; return d; }, "connection.hostname", /unknown key/],
  ["oauth without client_secret", () => { const d = httpImport(); conn(d).oauth = { address: "https://id.test/token", client_id: "c" }; return d; }, "connection.oauth.client_secret", /required/],
  ["unknown http method", () => { const d = httpImport(); conn(d).method = "fetch"; return d; }, "connection.method", /not allowed/],
  // file configs: which records, what happens
  ["import without create/update/remove", () => { const d = productImport(); delete fc(d).update; return d; }, "file_configs[0]", /at least one of create, update, remove/],
  ["product create value", () => { const d = productImport(); fc(d).create = "begin"; return d; }, "file_configs[0].create", /not a product create/],
  ["order update value", () => { const d = orderImport(); fc(d).update = "edit"; return d; }, "file_configs[0].update", /orders take update: true/],
  ["create on an export", () => { const d = orderExport(); fc(d).create = true; return d; }, "file_configs[0].create", /imports only/],
  ["remove_limit over 100%", () => { const d = productImport(); fc(d).remove_limit = "120%"; return d; }, "file_configs[0].remove_limit", /not a limit/],
  ["error_limit negative", () => { const d = productImport(); fc(d).error_limit = -1; return d; }, "file_configs[0].error_limit", /not a limit/],
  ["lineitem on a product import", () => { const d = productImport(); fc(d).lineitem = true; return d; }, "file_configs[0].lineitem", /exports only/],
  ["search syntax", () => { const d = orderExport(); fc(d).search = "(archived:=0"; return d; }, "file_configs[0].search", /search syntax/],
  // reading
  ["jsonpath and xpath", () => { const d = httpImport(); fc(d).xpath = 1; return d; }, "file_configs[0].xpath", /both/],
  ["jsonpath with csv", () => { const d = httpImport(); fc(d).format = "csv"; return d; }, "file_configs[0].jsonpath", /format json/],
  ["xpath with json", () => { const d = productImport(); Object.assign(fc(d), { xpath: 1, format: "json" }); return d; }, "file_configs[0].xpath", /format xml/],
  ["bulk_file with csv format", () => { const d = productImport(); d.file_configs = [{ name: "bulk.*", field_map: {}, bulk_file: 1, format: "csv" }]; return d; }, "file_configs[0].bulk_file", /as it is/],
  ["bulk_file with a mapping", () => { const d = productImport(); d.file_configs = [{ name: "bulk.*", field_map: { sku: "SKU" }, bulk_file: 1 }]; return d; }, "file_configs[0].field_map", /would do nothing/],
  ["bulk_file of orders", () => { const d = productImport(); d.type = "orders"; d.file_configs = [{ name: "bulk.*", field_map: {}, bulk_file: 1 }]; return d; }, "file_configs[0].bulk_file", /holds products/],
  ["offsets mixed with names", () => { const d = productImport(); fc(d).field_map = { sku: [0, 10], stock: "Qty" }; return d; }, "file_configs[0].field_map", /mixes/],
  ["offsets with csv format", () => { const d = productImport(); Object.assign(fc(d), { format: "csv", field_map: { sku: [0, 10] } }); return d; }, "file_configs[0].format", /fixed/],
  ["fixed format with names", () => { const d = productImport(); fc(d).format = "fixed"; return d; }, "file_configs[0].field_map", /offsets/],
  ["empty offsets", () => { const d = productImport(); fc(d).field_map = { sku: [5, 2] }; return d; }, "file_configs[0].field_map.sku", /end must be greater/],
  ["empty field_map", () => { const d = productImport(); fc(d).field_map = {}; delete fc(d).identifier; return d; }, "file_configs[0].field_map", /maps no field/],
  ["field_map missing", () => { const d = productImport(); delete fc(d).field_map; return d; }, "file_configs[0].field_map", /required/],
  ["field_map value a number", () => { const d = productImport(); fc(d).field_map = { sku: "Item", stock: 4 }; return d; }, "file_configs[0].field_map.stock", /not a field source/],
  ["identifier not mapped", () => { const d = productImport(); fc(d).identifier = "guid"; return d; }, "file_configs[0].identifier", /not mapped/],
  ["invalid name regex", () => { const d = productImport(); fc(d).name = "inventory_(\\d+.csv"; return d; }, "file_configs[0].name", /regular expression/],
  ["delimiter two characters", () => { const d = productImport(); fc(d).delimiter = ";;"; return d; }, "file_configs[0].delimiter", /one character/],
  ["after_import unknown", () => { const d = productImport(); fc(d).after_import = "archive"; return d; }, "file_configs[0].after_import", /not allowed/],
  ["after_import climbing out", () => { const d = productImport(); fc(d).after_import = "move:../x"; return d; }, "file_configs[0].after_import", /climb/],
  ["select unknown", () => { const d = productImport(); fc(d).select = "newest"; return d; }, "file_configs[0].select", /not allowed/],
  ["min_age negative", () => { const d = productImport(); fc(d).min_age = -1; return d; }, "file_configs[0].min_age", /whole number/],
  ["unknown encoding", () => { const d = productImport(); fc(d).encoding = "klingon-8"; return d; }, "file_configs[0].encoding", /unknown character encoding/],
  ["sheet on a csv", () => { const d = productImport(); Object.assign(fc(d), { format: "csv", sheet: 2 }); return d; }, "file_configs[0].sheet", /xlsx/],
  ["diff_tolerance text", () => { const d = productImport(); fc(d).diff_tolerance = "x"; return d; }, "file_configs[0].diff_tolerance", /number/],
  ["export format fixed", () => { const d = orderExport(); fc(d).format = "fixed"; return d; }, "file_configs[0].format", /not an export format/],
  ["import format jsonl", () => { const d = productImport(); fc(d).format = "jsonl"; return d; }, "file_configs[0].format", /not an import format/],
  ["export name climbing out", () => { const d = orderExport(); fc(d).name = "../orders.csv"; return d; }, "file_configs[0].name", /climb/],
  ["unknown file config key", () => { const d = productImport(); fc(d).colour = 1; return d; }, "file_configs[0].colour", /unknown key/],
  // action rules
  ["unknown action function", () => { const d = productImport(); fc(d).vendor_actions = [{ explode: true }]; return d; }, "file_configs[0].vendor_actions[0].explode", /unknown action function/],
  ["calculate syntax", () => { const d = productImport(); fc(d).vendor_actions = [{ calculate: { price: "round(cost * 1.3" } }]; return d; }, "file_configs[0].vendor_actions[0].calculate.price", /invalid expression/],
  ["calculate unknown function", () => { const d = productImport(); fc(d).vendor_actions = [{ calculate: { price: "sqrt(cost)" } }]; return d; }, "file_configs[0].vendor_actions[0].calculate.price", /unknown function/],
  ["replace with a bad regex", () => { const d = productImport(); fc(d).service_actions = [{ replace: { title: ["/([a-z/g", ""] } }]; return d; }, "file_configs[0].service_actions[0].replace.title[0]", /regular expression/],
  ["truncate negative", () => { const d = productImport(); fc(d).vendor_actions = [{ truncate: { title: -1 } }]; return d; }, "file_configs[0].vendor_actions[0].truncate.title", /length/],
  ["truncate to nothing", () => { const d = productImport(); fc(d).vendor_actions = [{ truncate: { title: 0 } }]; return d; }, "file_configs[0].vendor_actions[0].truncate.title", /whole number ≥ 1/],
  ["skip not true", () => { const d = productImport(); fc(d).vendor_actions = [{ skip: "yes" }]; return d; }, "file_configs[0].vendor_actions[0].skip", /expected true/],
  ["rule without function", () => { const d = productImport(); fc(d).vendor_actions = [{ search: "stock:<1" }]; return d; }, "file_configs[0].vendor_actions[0]", /at least one function/],
  ["rule search syntax", () => { const d = productImport(); fc(d).vendor_actions = [{ search: 'title:"open', skip: true }]; return d; }, "file_configs[0].vendor_actions[0].search", /search syntax/],
  ["trim of a number", () => { const d = productImport(); fc(d).vendor_actions = [{ trim: 3 }]; return d; }, "file_configs[0].vendor_actions[0].trim", /field name/],
  // parameters and placeholders
  ["duplicate parameter", () => { const d = productImport(); d.parameters = [{ name: "a", value: "1" }, { name: "a", value: "2" }]; conn(d).password = "<<a>>"; return d; }, "parameters[1].name", /duplicate/],
  ["parameter name with brackets", () => { const d = productImport(); d.parameters = [{ name: "sftp password", value: "x" }, { name: "a>b", value: "1" }]; return d; }, "parameters[1].name", /placeholder/],
  ["unknown <<parameter>>", () => { const d = productImport(); conn(d).path = "/<<supplier folder>>"; return d; }, "connection.path", /names no parameter/],
  ["record reference outside field_run", () => { const d = productImport(); conn(d).path = "/{{brand}}"; return d; }, "connection.path", /no run-time token/],
];

describe("one mistake, one problem at its path", () => {
  it.each(cases)("%s", (_label, make, path, message) => {
    const problems = problemsOf(make());
    expect(problems, JSON.stringify(problems, null, 1)).toHaveLength(1);
    expect(problems[0]?.path).toBe(path);
    expect(problems[0]?.message).toMatch(message);
  });
});

describe("problems say what is allowed", () => {
  it("lists the valid keys for an unknown key", () => {
    const [p] = problemsOf({ ...productImport(), colour: "red" });
    expect(p?.allowed).toContain("file_configs");
    expect(p?.allowed).toContain("schedule");
  });
  it("points an unknown key at the key it most likely meant", () => {
    const d = productImport();
    conn(d).host = "ftp.example.com";
    fc(d).identifer = "sku";
    fc(d).Delimiter = ";";
    fc(d).colour = 1;
    const messages = Object.fromEntries(problemsOf(d).map((p) => [p.path, p.message]));
    // Another tool's name for the key, one letter off, and another case; nothing close, no guess.
    expect(messages["connection.host"]).toBe('unknown key "host" in connection: did you mean "address"?');
    expect(messages["file_configs[0].identifer"]).toMatch(/did you mean "identifier"\?$/);
    expect(messages["file_configs[0].Delimiter"]).toMatch(/did you mean "delimiter"\?$/);
    expect(messages["file_configs[0].colour"]).toBe('unknown key "colour" in a file config');
  });
  it("lists the known action functions", () => {
    const d = productImport();
    fc(d).vendor_actions = [{ explode: true }];
    const [p] = problemsOf(d);
    for (const name of ["setValue", "ignoreValue", "remapField", "calculate", "replace", "prefix", "suffix", "trim", "uppercase", "lowercase", "truncate", "skip"]) {
      expect(p?.allowed).toContain(name);
    }
  });
  it("lists the product values of create", () => {
    const d = productImport();
    fc(d).create = "begin";
    expect(problemsOf(d)[0]?.allowed).toMatch(/start, add/);
  });
  it("lists the enum values", () => {
    expect(problemsOf({ ...productImport(), type: "items" })[0]?.allowed).toBe("products, orders, fitment");
  });
  it("lists the keys a connection type reads", () => {
    const d = productImport();
    conn(d).ssl_ftp = true;
    expect(problemsOf(d)[0]?.allowed).toMatch(/is_key_file/);
  });
});

describe("valid definitions pass", () => {
  it.each([
    ["a product import", productImport],
    ["an order export", orderExport],
    ["an order import", orderImport],
    ["an http import", httpImport],
  ])("%s", (_label, make) => {
    expect(problemsOf(make())).toEqual([]);
  });
  it("accepts every cron form of the spec", () => {
    for (const schedule of ["* * * * *", "*/5 * * * *", "0 6 * * 1-5", "0 6,18 * * *", "30 2 1 1,7 0", "0 0 * * 7", "0 0 29 2 *", "0 0 31 1-4 *", "0 0 30 2 1"]) {
      expect(problemsOf({ ...productImport(), schedule })).toEqual([]);
    }
  });
  it("refuses a schedule whose day never occurs in its months", () => {
    for (const schedule of ["0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 30-31 2 *"]) {
      expect(problemsOf({ ...productImport(), schedule })).toEqual([expect.objectContaining({ path: "schedule", message: expect.stringContaining("the schedule would never run") })]);
    }
  });
  it("accepts a case-insensitive name pattern and a move folder", () => {
    const d = productImport();
    Object.assign(fc(d), { name: "/INVENTORY_.*\\.CSV/i", after_import: "move:processed" });
    expect(problemsOf(d)).toEqual([]);
  });
  it("leaves metadata alone, whatever its keys", () => {
    expect(problemsOf({ ...productImport(), metadata: { oauth: { token: "x" }, anything: [1] } })).toEqual([]);
  });
});

describe("all problems at once", () => {
  it("reports five different mistakes with their paths", () => {
    const d = productImport();
    d.schedule = "0 25 * * *";
    conn(d).port = "22";
    Object.assign(fc(d), { create: "begin", delimiter: ";;" });
    fc(d).vendor_actions = [{ uppercase: "title", explode: 1 }];
    const paths = problemsOf(d).map((p) => p.path).sort();
    expect(paths).toEqual(["connection.port", "file_configs[0].create", "file_configs[0].delimiter", "file_configs[0].vendor_actions[0].explode", "schedule"]);
  });
  it("refuses what is not an object", () => {
    expect(problemsOf([1, 2])[0]?.message).toMatch(/JSON object/);
  });

  it("reports each unknown placeholder of a string once, and counts past the first five", () => {
    const d = productImport();
    conn(d).path = `/${"<<x>>".repeat(20_000)}`;
    // A fuzzed key of thousands of placeholders, under which each problem carried the key: their text outgrew a string.
    (d as Record<string, unknown>)["<<x>>".repeat(20_000)] = "<<x>>".repeat(20_000);
    expect(problemsOf(d).filter((p) => p.path === "connection.path").map((p) => p.message)).toEqual(["<<x>> names no parameter"]);
    conn(d).path = "/<<a>><<b>><<c>><<d>><<e>><<f>><<g>><<a>>";
    const messages = problemsOf(d).filter((p) => p.path === "connection.path").map((p) => p.message);
    expect(messages).toEqual([...["a", "b", "c", "d", "e"].map((n) => `<<${n}>> names no parameter`), "and 2 more placeholders that name no parameter"]);
  });
});
