import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, stockDefinition, type TestDaemon } from "../daemon/daemon-harness.js";
import { startHarness, type Harness } from "../embedded/helpers.js";
import { findPrototypeKeys, jsonDepth, valueDepth } from "../../src/json-limits.js";

/**
 * Hostile tenant, parsers at the edge (issue #24): each case is a request or
 * an input and the refusal it must get. A body nested thousands of levels
 * deep, a prototype key, a bad query value or an object in a log search once
 * answered 500 or was taken silently.
 */

const DEPTH = 3000;

/** `{"a":{"a":…1…}}` nested `levels` deep, as text: JSON.stringify of such a value is itself a deep recursion. */
function deepJson(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
}

/** The JSON of `value` with the placeholder string `"@DEEP@"` replaced by a value nested `levels` deep. */
function withDeep(value: unknown, levels: number): string {
  return JSON.stringify(value).replace('"@DEEP@"', deepJson(levels));
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  return { status: res.status, body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

/** Every message of an answer: the simple error's, the validation envelope's, the v1 failure's. */
function messages(body: Record<string, unknown>): string {
  const failed = (body.results as { failed?: Record<string, { message: string }> } | undefined)?.failed ?? {};
  return [String(body.message ?? ""), ...Object.values(failed).map((f) => f.message)].join(" | ");
}

describe("daemon API", () => {
  let t: TestDaemon;
  let id: number;

  const send = async (method: string, url: string, text: string): Promise<Answer> =>
    answer(await fetch(`${t.daemon.url}${url}`, { method, headers: { ...t.headers, "Content-Type": "application/json" }, body: text }));
  const count = async (): Promise<number> => Number((await t.request("GET", "/v3/automations/custom")).body.count);

  beforeAll(async () => {
    t = await startTestDaemon();
    const created = await t.request("POST", "/v3/automations/custom", stockDefinition({ name: "Kept as it is" }));
    expect(created.status).toBe(200);
    id = created.body.id as number;
  });
  afterAll(async () => t.close());

  it(`refuses a definition nested ${DEPTH} levels deep on POST and PATCH with 400 naming the limit, and stores nothing`, async () => {
    const before = await count();
    const posted = await send("POST", "/v3/automations/custom", withDeep(stockDefinition({ metadata: "@DEEP@" }), DEPTH));
    expect(posted.status).toBe(400);
    expect(messages(posted.body)).toContain(`the body nests ${DEPTH + 1} levels deep; at most 64 are allowed`);
    const patched = await send("PATCH", `/v3/automations/custom/${id}`, withDeep({ metadata: "@DEEP@" }, DEPTH));
    expect(patched.status).toBe(400);
    expect(messages(patched.body)).toMatch(/nests \d+ levels deep; at most 64 are allowed/);
    expect(await count()).toBe(before);
    const kept = await t.request("GET", `/v3/automations/custom/${id}`);
    expect((kept.body.automation as Record<string, unknown>).name).toBe("Kept as it is");
  });

  it("takes a definition nested within the limit", async () => {
    const res = await send("POST", "/v3/automations/custom", withDeep(stockDefinition({ name: "Nested metadata", metadata: "@DEEP@" }), 60));
    expect(res.status).toBe(200);
  });

  it("counts only real nesting: brackets inside strings, escaped quotes included, do not count", async () => {
    const identifier = `${"[{".repeat(100)}\\"${"{".repeat(100)}`;
    const res = await send("POST", "/v3/logs", JSON.stringify({ identifier }));
    expect(res.status).toBe(200);
    expect((res.body.results as { found: number }).found).toBe(0);
  });

  it("refuses an oversized body with 413 naming the route's limit", async () => {
    const big = JSON.stringify(stockDefinition({ metadata: { blob: "x".repeat(9 * 1024 * 1024) } }));
    const res = await send("POST", "/v3/automations/custom", big);
    expect(res.status).toBe(413);
    expect(messages(res.body)).toContain("larger than the 8 MB POST /v3/automations/custom accepts");
    const logs = await send("POST", "/v3/logs", JSON.stringify({ identifier: "y".repeat(100 * 1024) }));
    expect(logs.status).toBe(413);
    expect(messages(logs.body)).toContain("64 KB");
  });

  it.each([
    ["sort=__proto__", /sort must be one of id, name/],
    ["sort=constructor", /sort must be one of .*not "constructor"/],
    ["sort=toString", /sort must be one of .*not "toString"/],
    ["sort=hasOwnProperty&sortorder=desc", /sort must be one of/],
    ["sortorder=sideways", /sortorder must be asc or desc/],
    ["page=0", /page must be a whole number/],
    ["page=1&page=2", /page is given 2 times; give it once/],
    ["internal=maybe", /internal must be 1, 0, true or false/],
    ["disableCache=%7B%7D", /disableCache must be 1, 0, true or false/],
    ["__proto__=1", /the query names the key "__proto__"/],
    ["constructor=1", /the query names the key "constructor"/],
  ])("answers GET /v3/automations/custom?%s with 400", async (qs, expected) => {
    const res = await t.request("GET", `/v3/automations/custom?${qs}`);
    expect(res.status).toBe(400);
    expect(messages(res.body)).toMatch(expected);
  });

  it.each([
    ["a __proto__ key at the top", '{"__proto__":{"admin":true},"name":"x"}', /"__proto__" at __proto__;/],
    ["a constructor key in field_map", JSON.stringify(stockDefinition({ file_configs: [{ field_map: { constructor: "sku" }, identifier: "sku", update: "edit" }] })), /"constructor" at file_configs\[0\]\.field_map\.constructor/],
    ["a prototype key in the connection", JSON.stringify(stockDefinition({ connection: { type: "sdsftp", path: "feeds", prototype: { x: 1 } } })), /"prototype" at connection\.prototype/],
  ])("refuses %s in a definition with 400 naming the key path, and stores nothing", async (_what, text, expected) => {
    const before = await count();
    const res = await send("POST", "/v3/automations/custom", text);
    expect(res.status).toBe(400);
    expect(messages(res.body)).toMatch(expected);
    expect(messages(res.body)).toContain("the keys __proto__, constructor, prototype are refused");
    expect(await count()).toBe(before);
  });

  it("refuses a prototype name given as a value: a parameter name, a source column, a parameter in the path", async () => {
    const before = await count();
    const param = await t.request("POST", "/v3/automations/custom", stockDefinition({ parameters: [{ name: "prototype", value: "1", encrypted: false }, { name: "warehouse", value: "main", encrypted: false }] }));
    expect(param.status).toBe(400);
    expect(messages(param.body)).toContain('parameters[0].name: the parameter name "prototype" is refused');
    const column = await t.request("POST", "/v3/automations/custom", stockDefinition({ file_configs: [{ field_map: { sku: "__proto__" }, identifier: "sku", update: "edit" }] }));
    expect(column.status).toBe(400);
    expect(messages(column.body)).toContain('file_configs[0].field_map.sku: the source column "__proto__" is refused');
    expect(await count()).toBe(before);
    for (const name of ["__proto__", "constructor"]) {
      const put = await t.request("PUT", `/v3/automations/custom/${id}/parameters/${name}`, { value: "x", encrypted: false });
      expect(put.status).toBe(400);
      expect(messages(put.body)).toContain(`the parameter name "${name}" is refused`);
    }
    const kept = await t.request("GET", `/v3/automations/custom/${id}`);
    expect(JSON.stringify(kept.body)).not.toMatch(/__proto__|"constructor"/);
  });

  it("refuses a log search with an object or a list as a value, naming the field", async () => {
    const object = await send("POST", "/v3/logs", JSON.stringify({ identifier: { $ne: 1 } }));
    expect(object.status).toBe(400);
    expect(messages(object.body)).toContain("log search field identifier must be a text or a number, not an object");
    const list = await send("POST", "/v3/logs", JSON.stringify({ context: ["a", "b"] }));
    expect(list.status).toBe(400);
    expect(messages(list.body)).toContain('context must be a text or a number, not a list; several values of a field go in one text, comma separated ("context": "a,b")');
    const proto = await send("POST", "/v3/logs", '{"__proto__":{"identifier":"x"}}');
    expect(proto.status).toBe(400);
    expect(messages(proto.body)).toContain('the body names the key "__proto__"');
    const plain = await send("POST", "/v3/logs", JSON.stringify({ identifier: "g-A1,g-B2", records: 5 }));
    expect(plain.status).toBe(200);
  });
});

describe("embedded service", () => {
  let h: Harness;
  const send = async (method: string, url: string, text: string, type = "application/json"): Promise<Answer> =>
    answer(await fetch(`${h.svc.url}${url}`, { method, headers: { "X-Auth-User": h.svc.apiUser, "X-Auth-Token": h.svc.apiToken, "content-type": type }, body: text }));
  const orderCount = async (): Promise<number> => Number((await h.json("GET", "/v3/orders")).body.count);

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h.close());

  it(`refuses an order nested ${DEPTH} levels deep on POST /v3/orders with 400 naming the limit, and stores nothing`, async () => {
    const before = await orderCount();
    const res = await send("POST", "/v3/orders", withDeep({ channel: "web", order: "DEEP-1", notes: "@DEEP@" }, DEPTH));
    expect(res.status).toBe(400);
    expect(messages(res.body)).toContain(`the body nests ${DEPTH + 1} levels deep; at most 64 are allowed`);
    expect(await orderCount()).toBe(before);
  });

  it("refuses prototype keys in an order body, bulk or single, naming the key path", async () => {
    const before = await orderCount();
    const single = await send("POST", "/v3/orders", '{"channel":"web","order":"P-1","__proto__":{"status":"SHIPPED"}}');
    expect(single.status).toBe(400);
    expect(messages(single.body)).toContain('the body names the key "__proto__" at __proto__;');
    const bulk = await send("POST", "/v3/orders", JSON.stringify({ header: {}, data: [{ channel: "web", order: "P-2", items: [{ constructor: 1 }] }] }));
    expect(bulk.status).toBe(400);
    expect(messages(bulk.body)).toContain('"constructor" at data[0].items[0].constructor');
    const header = await send("POST", "/v3/orders", JSON.stringify({ header: ["__proto__", "order"], data: [[{ status: "SHIPPED" }, "P-3"]] }));
    expect(header.status).toBe(400);
    expect(messages(header.body)).toContain('header[0] is named "__proto__"; the keys __proto__, constructor, prototype are refused');
    expect(await orderCount()).toBe(before);
  });

  it("refuses an oversized webhook body with 413 naming the limit", async () => {
    const res = await send("POST", "/v3/webhooks/endpoints", JSON.stringify({ url: `http://127.0.0.1/${"z".repeat(100 * 1024)}` }));
    expect(res.status).toBe(413);
    expect(messages(res.body)).toContain("larger than the 64 KB POST /v3/webhooks/endpoints accepts");
  });

  it.each([
    ["/v3/orders?sort=__proto__", /sort "__proto__" is not a valid key/],
    ["/v3/orders?sort=constructor", /sort "constructor" is not a valid key/],
    ["/v3/orders?page=-1", /page must be a whole number/],
    ["/v3/orders?__proto__=1", /the query names the key "__proto__"/],
    ["/v3/webhooks/statistics?period=__proto__", /period must be one of 1h, 24h, 7d, 30d, not "__proto__"/],
    ["/v3/webhooks/statistics?period=constructor", /period must be one of 1h, 24h, 7d, 30d, not "constructor"/],
    ["/v3/orders?q=constructor.name:Object", /the field "constructor.name" is refused/],
    ["/v3/orders?q=status:=NEW%20OR%20billing.__proto__:x", /the field "billing.__proto__" is refused/],
    ["/v1/search/items/prototype:x", /the field "prototype" is refused/],
    ["/v1/editor/items?sort=__proto__", /cannot sort by "__proto_"/],
    ["/v1/editor/items?sort=constructor_", /cannot sort by "constructor"/],
  ])("answers GET %s with 400", async (url, expected) => {
    const res = await answer(await h.call("GET", url));
    expect(res.status).toBe(400);
    expect(messages(res.body)).toMatch(expected);
  });

  it("refuses a log search with an object value, on v3 and v1, naming the field", async () => {
    for (const url of ["/v3/logs", "/v1/logs"]) {
      const res = await send("POST", url, JSON.stringify({ identifier: { $ne: 1 } }));
      expect(res.status).toBe(400);
      expect(messages(res.body)).toContain("log search field identifier must be a text or a number, not an object");
    }
    const form = await send("POST", "/v1/logs", "identifier=a&identifier=b", "application/x-www-form-urlencoded");
    expect(form.status).toBe(400);
    expect(messages(form.body)).toContain("identifier must be a text or a number, not a list");
  });

  it("refuses a prototype name as a bulk upload's form field or as a column of its file", async () => {
    const form = (csv: string, extra: Array<[string, string]> = []): FormData => {
      const f = new FormData();
      for (const [k, v] of extra) f.append(k, v);
      f.append("bulk_file", new Blob([csv]), "bulk.csv");
      return f;
    };
    const proto = await answer(await h.call("POST", "/v1/bulk", form("action,guid\nadd,g-1\n", [["__proto__", "x"]])));
    expect(proto.status).toBe(400);
    expect(messages(proto.body)).toContain("a form field of the body is named one of __proto__, constructor, prototype;");
    const field = await answer(await h.call("POST", "/v1/bulk", form("action,guid\nadd,g-1\n", [["constructor", "x"]])));
    expect(field.status).toBe(400);
    expect(messages(field.body)).toContain("the keys __proto__, constructor, prototype are refused");
    const column = await answer(await h.call("POST", "/v1/bulk", form("action,guid,constructor\nadd,g-1,x\n")));
    expect(column.status).toBe(400);
    expect(messages(column.body)).toContain('column 3 of bulk_file is named "constructor"');
  });

  it("refuses a prototype key in a form body", async () => {
    const res = await send("POST", "/v1/editor/items/add", "identifier=guid&guid=g-1&__proto__=x", "application/x-www-form-urlencoded");
    expect(res.status).toBe(400);
    expect(messages(res.body)).toContain('the body names the key "__proto__"');
  });
});

describe("conveyor check", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "conveyor-parser-limits-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], { env: { ...process.env, CONVEYOR_DATA_DIR: path.join(dir, "data") }, timeout: 60_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
      });
    });
  }

  it(`reports every file of a batch with a ${DEPTH}-deep one in the middle and an oversized one, and exits 2`, async () => {
    const good = path.join(dir, "good.json");
    const deep = path.join(dir, "deep.json");
    const good2 = path.join(dir, "good2.json");
    const proto = path.join(dir, "proto.json");
    const huge = path.join(dir, "huge.json");
    writeFileSync(huge, JSON.stringify(stockDefinition({ metadata: { blob: "x".repeat(9 * 1024 * 1024) } })));
    writeFileSync(good, JSON.stringify(stockDefinition()));
    writeFileSync(deep, withDeep(stockDefinition({ metadata: "@DEEP@" }), DEPTH));
    writeFileSync(good2, JSON.stringify(stockDefinition({ name: "Second" })));
    writeFileSync(proto, JSON.stringify(stockDefinition({ parameters: [{ name: "constructor", value: "x", encrypted: false }] })).replace('"field_run":{', '"field_run":{"__proto__":"x",'));
    const res = await cli(["check", good, deep, good2, proto, huge]);
    expect(res.code).toBe(2);
    expect(res.stdout).toContain(`${good}: ok`);
    expect(res.stdout).toContain(`${deep}: the file nests ${DEPTH + 1} levels deep; at most 64 are allowed`);
    expect(res.stdout).toContain(`${good2}: ok`);
    expect(res.stdout).toContain(`${proto}: file_configs[0].field_run.__proto__: the key "__proto__" is refused`);
    expect(res.stdout).toContain(`${proto}: parameters[0].name: the parameter name "constructor" is refused`);
    expect(res.stdout).toMatch(new RegExp(`${huge}: the file is \\d+ bytes; a definition is at most 8388608 bytes \\(8 MB\\)`));
    expect(res.stdout).toMatch(/problems? in 3 of 5 definitions/);
  });
});

describe("the measures behind the limits", () => {
  it("counts depth on the text as JSON.parse would nest it, ignoring brackets in strings", () => {
    expect(jsonDepth("1")).toBe(0);
    expect(jsonDepth("[]")).toBe(1);
    expect(jsonDepth('{"a":[{"b":[]}],"c":{}}')).toBe(4);
    expect(jsonDepth('{"a":"[[[{{{\\"[[["}')).toBe(1);
    expect(jsonDepth(deepJson(DEPTH))).toBe(DEPTH);
    expect(valueDepth(JSON.parse(deepJson(DEPTH)))).toBe(DEPTH);
    expect(valueDepth({ a: [{ b: [] }], c: {} })).toBe(4);
  });

  it("finds every prototype key with its path, own keys only", () => {
    const value = JSON.parse('{"a":[{"__proto__":1}],"b":{"c":{"constructor":2}},"prototype":3,"ok":{"toString":4}}') as unknown;
    expect(findPrototypeKeys(value).map((k) => k.path).sort()).toEqual(["a[0].__proto__", "b.c.constructor", "prototype"]);
    expect(findPrototypeKeys({ plain: { nested: [1, 2, { x: "constructor" }] } })).toEqual([]);
  });
});
