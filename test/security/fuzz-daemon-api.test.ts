import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, stockDefinition, type TestDaemon } from "../daemon/daemon-harness.js";
import { deep, definitionLike, FuzzTally, junk, leaf, bodyOf, nestText, oddString, type Json } from "./fuzz-inputs.js";
import { errorCapture, queryOf, rawBody, segment, send, sortKey, statusLines, type FuzzRequest, type Sender } from "./fuzz-http.js";

/**
 * Issue #24: generated bodies and query strings against the daemon API on
 * loopback (POST/PATCH custom automations, install and PATCH installed ones,
 * parameters PUT, the log search, run and listing queries). Every answer is
 * below 500 and the daemon keeps answering. Bounded by count and by time.
 */

const SHARED_ID = 4711;
const LOG_KEYS = ["start", "records", "identifier", "context", "integration", "instance", "request_id", "timestamp_start", "timestamp_end", "id", "channel_id", "action", "operation", "method", "type", "result", "job_id"];
const LISTING_KEYS = ["debug", "diff", "user_id", "page", "internal", "showFilters", "sort", "sortorder", "notify", "email", "type", "disableCache"];
const TOP_KEYS = ["name", "vendor", "description", "slug", "active", "draft", "schedule", "events", "timezone", "type", "action", "connection", "file_configs", "parameters", "metadata"];

function published(): Record<string, unknown> {
  return {
    ...stockDefinition({ name: "Shared stock feed", schedule: "0 4 * * *", active: false }),
    shared_id: SHARED_ID,
    parameters: [
      { name: "warehouse", value: "default", encrypted: false },
      { name: "partner key", value: null, encrypted: true, required: false },
    ],
  };
}

const parameter = bodyOf(["name", "value", "encrypted"]);
const installBody = fc.oneof(
  bodyOf(["shared_id", "active", "parameters", "schedule", "timezone"], fc.oneof(leaf, fc.constant(SHARED_ID), fc.array(parameter, { maxLength: 3 }))),
  fc.record({ shared_id: fc.constant(SHARED_ID), active: fc.constantFrom<Json>(false, 0, "0", "maybe"), parameters: fc.array(parameter, { maxLength: 3 }) }),
);

let t: TestDaemon;
let customId = 0;
let installedId = 0;
const tally = new FuzzTally("daemon API");
const statuses = new Map<string, number>();
let sender: Sender;

beforeAll(async () => {
  const errors = errorCapture();
  t = await startTestDaemon({ published: { "shared.json": published() }, daemon: { logger: errors.logger } });
  sender = { base: t.daemon.url, headers: t.headers, tally, statuses, lastError: errors.last };
  const created = await t.request("POST", "/v3/automations/custom", stockDefinition({ name: "Fuzz target", active: false }));
  customId = Number(created.body.id);
  const installed = await t.request("POST", "/v3/automations/installed", { shared_id: SHARED_ID, active: false, parameters: [] });
  installedId = Number(installed.body.id);
});

afterAll(async () => {
  console.log(`${tally.report()}\n${statusLines(statuses)}`);
  await t?.close();
});

/** The requests of the fuzz; ids are mostly the real ones, so the bodies reach validation. */
function requests(): fc.Arbitrary<FuzzRequest> {
  const id = fc.oneof({ weight: 6, arbitrary: fc.constant(String(customId)) }, { weight: 1, arbitrary: oddString.map(segment) });
  const iid = fc.oneof({ weight: 6, arbitrary: fc.constant(String(installedId)) }, { weight: 1, arbitrary: oddString.map(segment) });
  const kindId = fc.oneof(id.map((i) => `custom/${i}`), iid.map((i) => `installed/${i}`));
  const body = fc.oneof({ weight: 8, arbitrary: definitionLike.map((json) => ({ json })) }, { weight: 1, arbitrary: rawBody });
  return fc.oneof(
    body.map((b) => ({ route: "POST custom", method: "POST", path: "/v3/automations/custom", body: b })),
    fc.tuple(id, fc.oneof(bodyOf(TOP_KEYS, junk(4)), definitionLike)).map(([i, json]) => ({ route: "PATCH custom", method: "PATCH", path: `/v3/automations/custom/${i}`, body: { json } })),
    installBody.map((json) => ({ route: "POST installed", method: "POST", path: "/v3/automations/installed", body: { json } })),
    fc.tuple(iid, bodyOf(["active", "parameters", "schedule", "timezone"], fc.oneof(leaf, fc.array(parameter, { maxLength: 3 })))).map(([i, json]) => ({ route: "PATCH installed", method: "PATCH", path: `/v3/automations/installed/${i}`, body: { json } })),
    fc.tuple(kindId, fc.oneof(fc.constantFrom("warehouse", "partner key"), oddString), bodyOf(["value", "encrypted"])).map(([k, name, json]) => ({ route: "PUT parameter", method: "PUT", path: `/v3/automations/${k}/parameters/${segment(name)}`, body: { json } })),
    fc.tuple(queryOf(LOG_KEYS), bodyOf(LOG_KEYS)).map(([query, json]) => ({ route: "POST logs", method: "POST", path: "/v3/logs", query, body: { json } })),
    fc.tuple(fc.constantFrom("custom", "installed", "published"), queryOf(LISTING_KEYS)).map(([k, query]) => ({ route: "GET listing", method: "GET", path: `/v3/automations/${k}`, query })),
    // Sort keys name a property of a lookup table: the issue's `?sort=__proto__` answered 500.
    fc.tuple(fc.constantFrom("custom", "installed", "published"), sortKey(["id", "name", "slug", "type", "action", "schedule", "created", "last_modified"]), fc.constantFrom("asc", "desc")).map(([k, sort, sortorder]) => ({ route: "GET listing sort", method: "GET", path: `/v3/automations/${k}`, query: { sort, sortorder } })),
    fc.tuple(kindId, queryOf(["debug", "diff", "notify", "email", "force", "wait"])).map(([k, query]) => ({ route: "GET run", method: "GET", path: `/v3/automations/${k}/run`, query: safeRunQuery(query) })),
    fc.tuple(queryOf(["automation", "limit", "mode"]), fc.option(oddString)).map(([query, runId]) => ({ route: "GET runs", method: "GET", path: `/v3/automations/runs${runId === null ? "" : `/${segment(runId)}`}`, query })),
    fc.tuple(kindId, queryOf(["type"])).map(([k, query]) => ({ route: "DELETE status", method: "DELETE", path: `/v3/automations/${k}/status`, query })),
  );
}

/** A valid `wait` would hold the request for up to ten minutes: the fuzz asks for runs, never waits on them. */
function safeRunQuery(query: Record<string, string | string[]>): Record<string, string | string[]> {
  const wait = query.wait;
  return typeof wait === "string" && /^\d+$/.test(wait) ? { ...query, wait: `${wait}s` } : query;
}

describe("fuzz: daemon API bodies and queries", () => {
  it("answers every generated request below 500", async () => {
    await fc.assert(
      fc.asyncProperty(requests(), async (r) => {
        await send(sender, r);
      }),
      { numRuns: 3_000, interruptAfterTimeLimit: 20_000 },
    );
    expect(tally.inputs).toBeGreaterThan(300);
    expect(tally.failures).toEqual([]);
  });

  // Until the JSON depth limits of issue #24 are in, these answer 500 (Maximum call stack size exceeded).

  it("answers bodies nested thousands deep below 500", async () => {
    const before = tally.failures.length;
    await fc.assert(
      fc.asyncProperty(deep, fc.constantFrom("POST custom", "PATCH custom", "POST installed", "POST logs"), async (d, route) => {
        const plain = JSON.stringify(route === "POST installed" ? { shared_id: SHARED_ID, active: false } : stockDefinition());
        const raw = `${plain.slice(0, -1)},"${route === "POST installed" ? "parameters" : "metadata"}":${nestText(d)}}`;
        const paths: Record<string, [string, string]> = {
          "POST custom": ["POST", "/v3/automations/custom"],
          "PATCH custom": ["PATCH", `/v3/automations/custom/${customId}`],
          "POST installed": ["POST", "/v3/automations/installed"],
          "POST logs": ["POST", "/v3/logs"],
        };
        const [method, path] = paths[route] ?? ["POST", "/v3/automations/custom"];
        await send(sender, { route: `${route} (deep)`, method, path, body: { raw, type: "application/json" } });
      }),
      { numRuns: 40, interruptAfterTimeLimit: 10_000 },
    );
    expect(tally.failures.slice(before)).toEqual([]);
  });

  it("answers a key and a value of thousands of placeholders below 500", async () => {
    // Found by the fuzz: each placeholder was a problem carrying the key, and their text outgrew a string.
    const many = "<<x>>".repeat(20_000);
    for (const body of [{ [many]: many }, { connection: { type: "sftp", host: many, path: many } }]) {
      const res = await t.request("PATCH", `/v3/automations/custom/${customId}`, body);
      expect(res.status).toBe(400);
    }
  });

  it("is still up and serving after the fuzz", async () => {
    const res = await t.request("GET", "/v3/automations/custom");
    expect(res.status).toBe(200);
    const own = await t.request("GET", `/v3/automations/custom/${customId}`);
    expect(own.status).toBe(200);
  });
});
