import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgSchemas } from "../helpers/postgres.js";
import { startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

const PASSWORD = "sftp-Secret-Pa55";
const API_KEY = "enc-param-value-778899";

function sftpDefinition(): Record<string, unknown> {
  return {
    ...stockDefinition({ name: "Partner SFTP", active: false }),
    connection: { type: "sftp", address: "sftp.partner.example", username: "u", password: PASSWORD, path: "/out" },
    parameters: [
      { name: "warehouse", value: "main", encrypted: false },
      { name: "api key", value: API_KEY, encrypted: true },
    ],
  };
}

const pgs = new PgSchemas();
afterAll(async () => pgs.end());

/** The same contract on both state stores: one SQLite file, or PostgreSQL as a cluster uses it. */
describe.each(["sqlite", "postgres"] as const)("daemon API on %s", (kind) => {
  let t: TestDaemon;
  let id: number;

  beforeAll(async () => {
    const env: Record<string, string> = kind === "postgres" ? { CONVEYOR_DATABASE_URL: pgs.url() } : {};
    t = await startTestDaemon({ definitions: { "stock.json": stockDefinition() }, env });
  });
  afterAll(async () => t.close());

  /** Everything the state database holds, as bytes: the SQLite file (and its WAL), or the PostgreSQL rows. */
  async function storedBytes(): Promise<Buffer> {
    if (kind === "postgres") {
      const schema = new URL(String(t.settings.databaseUrl)).searchParams.get("schema") ?? "";
      const { rows } = await pgs.query<{ text: string }>(
        `SELECT coalesce(string_agg(a::text, ''), '') || coalesce((SELECT string_agg(r::text, '') FROM "${schema}".runs r), '') AS text FROM "${schema}".daemon_automations a`,
      );
      return Buffer.from(rows[0]?.text ?? "");
    }
    const db = path.join(t.settings.dataDir, "state.db");
    return Buffer.concat([readFileSync(db), ...(existsSync(`${db}-wal`) ? [readFileSync(`${db}-wal`)] : [])]);
  }

  describe("v3 custom automations (seed part 4.2)", () => {
    it("refuses a request without both credentials, or with a wrong token, with 401 and the throttling headers", async () => {
      const variants: Array<Record<string, string>> = [{}, { "X-Auth-User": "demo" }, { "X-Auth-User": "demo", "X-Auth-Token": "wrong-token-123" }, { "X-Auth-Integration": "conveyor" }];
      for (const headers of variants) {
        const res = await t.request("GET", "/v3/automations/custom", undefined, headers);
        expect(res.status).toBe(401);
        expect(res.body.result).toBe("error");
        expect(String(res.body.message)).toMatch(/X-Auth-User|wrong API user or token/);
        expect(res.headers.get("x-rate-limit-type")).toBe("read");
      }
    });

    it("puts the four rate-limit headers on every response, by class", async () => {
      const read = await t.request("GET", "/v3/automations/custom");
      expect(read.headers.get("x-rate-limit-limit")).toBe("100000");
      expect(Number(read.headers.get("x-rate-limit-remaining"))).toBeLessThan(100000);
      expect(Number(read.headers.get("x-rate-limit-reset"))).toBeGreaterThan(Date.now() / 1000);
      const write = await t.request("DELETE", "/v3/automations/custom/999999");
      expect(write.headers.get("x-rate-limit-type")).toBe("write");
    });

    it("creates: 200 {id:number, results.successful[{code:1}]}", async () => {
      const res = await t.request("POST", "/v3/automations/custom", sftpDefinition());
      expect(res.status).toBe(200);
      expect(typeof res.body.id).toBe("number");
      expect(res.body.results).toEqual({ successful: [{ code: 1, message: expect.any(String) }] });
      id = res.body.id as number;
    });

    it("answers an invalid definition with the validation envelope listing every problem", async () => {
      const res = await t.request("POST", "/v3/automations/custom", { name: "", active: "maybe", schedule: "61 * * * *", type: "products", action: "import", file_configs: [{ field_map: {}, create: "begin" }] });
      expect(res.status).toBe(400);
      const failed = (res.body.results as { failed: Record<string, { message: string; code: number }> }).failed;
      expect(Object.keys(failed).length).toBeGreaterThanOrEqual(4);
      expect(Object.keys(failed)[0]).toBe("0");
      const all = Object.values(failed).map((f) => f.message).join("\n");
      for (const field of ["name", "active", "schedule", "create"]) expect(all).toContain(field);
      expect(Object.values(failed).every((f) => f.code === 1)).toBe(true);
    });

    it("answers a parameter named by an object that cannot be made text with 400, not 500", async () => {
      // String() throws on an object whose toString is no function; the fuzz of the daemon API found it.
      for (const name of [{ toString: "x", valueOf: "y" }, { toString: {} }]) {
        const res = await t.request("POST", "/v3/automations/custom", stockDefinition({ name: "Odd parameter", active: false, parameters: [{ name, value: "x" }] }));
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body)).toContain("parameters");
      }
    });

    it("reports a template that does not compile with its field, line and column", async () => {
      const definition = { ...stockDefinition({ name: "Feed", action: "export" }), file_configs: [{ name: "feed.xml", field_map: { sku: "sku" }, template: "<feed>\n{% for p in data %}<i>{{ p.sku|nope }}</i>{% endfor %}\n</feed>" }] };
      const res = await t.request("POST", "/v3/automations/custom", definition);
      expect(res.status).toBe(400);
      const failed = Object.values((res.body.results as { failed: Record<string, { message: string }> }).failed).map((f) => f.message);
      expect(failed.join("\n")).toMatch(/file_configs\[0\]\.template.*line 2, column 23: unknown filter "nope"/);
    });

    it("lists in the seed's custom shape, passwords and encrypted parameters masked", async () => {
      const res = await t.request("GET", "/v3/automations/custom");
      expect(res.status).toBe(200);
      expect(typeof res.body.count).toBe("string");
      expect(new Date(String(res.body.timestamp)).toISOString()).toBe(res.body.timestamp);
      const list = res.body.automations as Array<Record<string, unknown>>;
      const mine = list.find((a) => a.id === String(id));
      expect(mine).toMatchObject({ action: "import", active: false, connection: "sftp", shared: false, shared_id: null, user_id: "demo", slug: "partner-sftp", metadata: null });
      for (const k of ["created", "last_modified", "name", "schedule", "type", "vendor", "config"]) expect(mine).toHaveProperty(k);
      const config = mine?.config as { connection: Record<string, unknown>; parameters: Array<Record<string, unknown>> };
      expect(config.connection).toMatchObject({ address: "sftp.partner.example", password: "********", path: "/out", port: 22, type: "sftp", username: "u" });
      expect(config.parameters.find((p) => p.name === "api key")?.value).toBe("********");
      expect(res.text).not.toContain(PASSWORD);
      expect(res.text).not.toContain(API_KEY);
    });

    it("rejects unknown query parameters on a listing with 400 naming them and the valid ones (part 7)", async () => {
      const res = await t.request("GET", "/v3/automations/custom?pagesize=5&colour=red&page=1");
      expect(res.status).toBe(400);
      const failed = (res.body.results as { failed: Record<string, { message: string; code: number }> }).failed;
      expect(failed["0"]?.code).toBe(1);
      expect(failed["0"]?.message).toContain("pagesize, colour");
      for (const valid of ["debug", "diff", "user_id", "page", "internal", "showFilters", "sort", "sortorder", "notify", "email", "type", "disableCache"]) expect(failed["0"]?.message).toContain(valid);
      const ok = await t.request("GET", "/v3/automations/custom?page=1&sort=name&sortorder=desc&disableCache=1");
      expect(ok.status).toBe(200);
    });

    it("fetches by id: {automation, status, timestamp}; custom status start/finish are booleans", async () => {
      const res = await t.request("GET", `/v3/automations/custom/${id}`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.automation as object).sort()).toEqual(["action", "active", "connection", "file_configs", "id", "name", "schedule", "slug", "type", "user_id", "vendor"]);
      expect(res.body.status).toEqual({
        debug_files: [],
        last_run_id: null,
        last_run_start_debug: false,
        last_run_finish_debug: false,
        last_run_success_debug: null,
        last_run_start_prod: false,
        last_run_finish_prod: false,
        last_run_success_prod: null,
      });
      expect(typeof res.body.timestamp).toBe("string");
      expect((await t.request("GET", "/v3/automations/custom/abc")).status).toBe(400);
      expect((await t.request("GET", "/v3/automations/custom/987654")).status).toBe(404);
    });

    it("updates only the supplied fields: 200 {id:string, code 2}; a masked password sent back keeps the stored one", async () => {
      const listed = await t.request("GET", "/v3/automations/custom");
      const mine = (listed.body.automations as Array<Record<string, unknown>>).find((a) => a.id === String(id));
      const connection = (mine?.config as { connection: Record<string, unknown> }).connection;
      const res = await t.request("PATCH", `/v3/automations/custom/${id}`, { vendor: "Partner Ltd", connection: { ...connection, path: "/out2" } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: String(id), results: { successful: [{ code: 2, message: expect.any(String) }] } });
      // Secrets are sealed at rest: the definition a run gets (opened) is the one to compare.
      const stored = t.daemon.definitions.effective(await t.daemon.definitions.own("demo", "custom", id)).raw as { connection: Record<string, unknown>; vendor: string; name: string };
      expect(stored.connection.password).toBe(PASSWORD);
      expect(stored.connection.path).toBe("/out2");
      expect(stored.vendor).toBe("Partner Ltd");
      expect(stored.name).toBe("Partner SFTP");
      const bad = await t.request("PATCH", `/v3/automations/custom/${id}`, { schedule: "every day", type: "cars" });
      expect(bad.status).toBe(400);
      expect(Object.keys((bad.body.results as { failed: object }).failed)).toHaveLength(2);
    });

    it("masks secret headers and payload keys in a listing, and keeps them when the listing is sent back", async () => {
      const headers = { Authorization: "Bearer hdr-token-3141", "X-Api-Key": "hdr-key-2718", "X-Shop-Key": "hdr-shop-1414", Accept: "text/csv" };
      const created = await t.request("POST", "/v3/automations/custom", {
        ...stockDefinition({ name: "Keyed HTTP feed", active: false }),
        connection: { type: "http", address: "https://feeds.example/stock.csv", method: "GET", headers, payload: { token: "pl-token-1618", since: "today" } },
      });
      const httpId = Number(created.body.id);
      const listed = await t.request("GET", "/v3/automations/custom");
      const mine = (listed.body.automations as Array<Record<string, unknown>>).find((a) => a.id === String(httpId));
      const connection = (mine?.config as { connection: Record<string, unknown> }).connection;
      const shown = JSON.stringify(connection);
      for (const secret of ["hdr-token-3141", "hdr-key-2718", "hdr-shop-1414", "pl-token-1618"]) expect(shown).not.toContain(secret);
      expect(connection.headers).toMatchObject({ Accept: "text/csv" });
      const patched = await t.request("PATCH", `/v3/automations/custom/${httpId}`, { connection: { ...connection, address: "https://feeds.example/stock2.csv" } });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      const stored = t.daemon.definitions.effective(await t.daemon.definitions.own("demo", "custom", httpId)).raw as { connection: { headers: Record<string, string>; payload: Record<string, string>; address: string } };
      expect(stored.connection.headers).toEqual(headers);
      expect(stored.connection.payload).toEqual({ token: "pl-token-1618", since: "today" });
      expect(stored.connection.address).toBe("https://feeds.example/stock2.csv");
      expect((await t.request("DELETE", `/v3/automations/custom/${httpId}`)).status).toBe(200);
    });

    it("sets one parameter: PUT …/parameters/{name} 200 code 2; encrypted values are encrypted at rest", async () => {
      const res = await t.request("PUT", `/v3/automations/custom/${id}/parameters/api%20key`, { encrypted: true, value: "rotated-key-445566" });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: String(id), results: { successful: [{ code: 2, message: expect.any(String) }] } });
      const stored = (await t.daemon.definitions.own("demo", "custom", id)).body as { parameters: Array<{ name: string; value: string }> };
      expect(stored.parameters.find((p) => p.name === "api key")?.value).toMatch(/^enc:v1:/);
      const file = await storedBytes();
      expect(file.length).toBeGreaterThan(100);
      expect(file.includes(Buffer.from("enc:v1:"))).toBe(true);
      expect(file.includes(Buffer.from("rotated-key-445566"))).toBe(false);
      expect(file.includes(Buffer.from(API_KEY))).toBe(false);
      expect((await t.request("PUT", `/v3/automations/custom/${id}/parameters/x`, { encrypted: false })).status).toBe(400);
    });
  });

  describe("runs through the API", () => {
    it("queues a run: 200 {id, message, result}; debug runs write debug files readable over HTTP", async () => {
      const list = await t.request("GET", "/v3/automations/custom");
      const stock = (list.body.automations as Array<Record<string, unknown>>).find((a) => a.slug === "stock-feed");
      const res = await t.request("GET", `/v3/automations/custom/${String(stock?.id)}/run?debug=1&diff=0`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: expect.any(String), message: expect.any(String), result: "success" });
      const run = await waitForRun(t, String(res.body.id));
      expect(run).toMatchObject({ mode: "debug", trigger: "api", outcome: "success" });
      const files = await t.request("GET", `/v3/automations/runs/${String(res.body.id)}/debug-files`);
      expect(files.body.debug_files).toEqual(expect.arrayContaining(["plan.csv", "summary.json"]));
      const plan = await t.request("GET", `/v3/automations/runs/${String(res.body.id)}/debug-files/plan.csv`);
      expect(plan.text).toContain("update,edit,A1,stock,1,11");
      const escape = await t.request("GET", `/v3/automations/runs/${String(res.body.id)}/debug-files/..%2F..%2Fsecret.key`);
      expect(escape.status).toBe(400);
      expect(escape.text).not.toMatch(/[0-9a-f]{64}/);
      const status = await t.request("GET", `/v3/automations/custom/${String(stock?.id)}`);
      expect(status.body.status).toMatchObject({ last_run_id: res.body.id, last_run_start_debug: true, last_run_finish_debug: true, last_run_success_debug: true });
    });

    it("resets a status half: DELETE …/status?type=debug 200 code 3; a missing type is 400", async () => {
      const list = await t.request("GET", "/v3/automations/custom");
      const stock = (list.body.automations as Array<Record<string, unknown>>).find((a) => a.slug === "stock-feed");
      expect((await t.request("DELETE", `/v3/automations/custom/${String(stock?.id)}/status`)).status).toBe(400);
      const res = await t.request("DELETE", `/v3/automations/custom/${String(stock?.id)}/status?type=debug`);
      expect(res.body).toEqual({ id: String(stock?.id), results: { successful: [{ code: 3, message: expect.any(String) }] } });
      const status = await t.request("GET", `/v3/automations/custom/${String(stock?.id)}`);
      expect(status.body.status).toMatchObject({ last_run_start_debug: false, debug_files: [] });
    });

    it("lists run records and searches the run logs with POST /v3/logs", async () => {
      const list = await t.request("GET", "/v3/automations/custom");
      const stock = (list.body.automations as Array<Record<string, unknown>>).find((a) => a.slug === "stock-feed");
      const res = await t.request("GET", `/v3/automations/custom/${String(stock?.id)}/run`);
      await waitForRun(t, String(res.body.id));
      const runs = await t.request("GET", `/v3/automations/runs?automation=${String(stock?.id)}&limit=5`);
      expect((runs.body.runs as unknown[]).length).toBe(2);
      const logs = await t.request("POST", "/v3/logs", { identifier: "A1,B2", job_id: String(res.body.id), records: 1 });
      const results = logs.body.results as { found: number; logs: Array<Record<string, unknown>>; records: string; start: number };
      expect(results.found).toBe(2);
      expect(results.logs).toHaveLength(1);
      expect(results.logs[0]).toMatchObject({ action: "edit", job_id: res.body.id, method: "auto", operation: "import", result: "success" });
      expect(results.records).toBe("1");
      expect((await t.request("POST", "/v3/logs", { records: 51 })).status).toBe(400);
    });

    it("deletes: 200 {id:string, code 3}; the automation is gone", async () => {
      const res = await t.request("DELETE", `/v3/automations/custom/${id}`);
      expect(res.body).toEqual({ id: String(id), results: { successful: [{ code: 3, message: expect.any(String) }] } });
      expect((await t.request("GET", `/v3/automations/custom/${id}`)).status).toBe(404);
    });
  });
});
