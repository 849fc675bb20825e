import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readPointers, writePointers } from "../../src/pointers/index.js";
import { PgSchemas } from "../helpers/postgres.js";
import { startTestDaemon, stockDefinition, type TestDaemon } from "./daemon-harness.js";

/**
 * Pointers over the API: the listing and the fetch show the state store's
 * values in `metadata.pointers` (masked like the rest), and a PATCH of
 * `metadata.pointers` sets one or, with null, resets it to its initial value.
 */

const INITIAL = "2025-01-01T00:00:00Z";
const pgs = new PgSchemas();
afterAll(async () => pgs.end());

describe.each(["sqlite", "postgres"] as const)("pointers over the API on %s", (kind) => {
  let t: TestDaemon;
  let id: number;

  beforeAll(async () => {
    t = await startTestDaemon({ env: kind === "postgres" ? { CONVEYOR_DATABASE_URL: pgs.url() } : {} });
    const created = await t.request("POST", "/v3/automations/custom", {
      ...stockDefinition({ name: "Tracking changes", active: false }),
      connection: { type: "http", address: "https://api.example.test/shipments", method: "GET", payload: {}, pointers: { since: { from: "updated_at", initial: INITIAL }, last_id: { from: "id", keep: "last" } } },
      metadata: { note: "kept", api_token: "meta-secret-5150" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    id = Number(created.body.id);
  });
  afterAll(async () => t.close());

  async function listedMetadata(): Promise<Record<string, unknown>> {
    const listed = await t.request("GET", "/v3/automations/custom");
    const mine = (listed.body.automations as Array<Record<string, unknown>>).find((a) => a.id === String(id));
    return mine?.metadata as Record<string, unknown>;
  }

  async function fetchedPointers(): Promise<unknown> {
    const fetched = await t.request("GET", `/v3/automations/custom/${id}`);
    return (fetched.body.automation as { metadata?: { pointers?: unknown } }).metadata?.pointers;
  }

  it("shows the initial value before any run, beside the definition's metadata, masked", async () => {
    const metadata = await listedMetadata();
    expect(metadata).toEqual({ note: "kept", api_token: "********", pointers: { since: INITIAL } });
    expect(await fetchedPointers()).toEqual({ since: INITIAL });
  });

  it("shows what a run stored", async () => {
    await writePointers(t.daemon.store, String(id), { since: "2026-01-05T08:30:00Z", last_id: "42" });
    expect((await listedMetadata()).pointers).toEqual({ since: "2026-01-05T08:30:00Z", last_id: "42" });
  });

  it("PATCH sets a pointer in the state store, not in the definition", async () => {
    const res = await t.request("PATCH", `/v3/automations/custom/${id}`, { metadata: { pointers: { since: "2026-01-01T00:00:00Z" } } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await readPointers(t.daemon.store, String(id))).toEqual({ since: "2026-01-01T00:00:00Z", last_id: "42" });
    expect(await fetchedPointers()).toEqual({ since: "2026-01-01T00:00:00Z", last_id: "42" });
    const raw = t.daemon.definitions.effective(await t.daemon.definitions.own("demo", "custom", id)).raw as { metadata: Record<string, unknown> };
    expect(raw.metadata).toEqual({ note: "kept", api_token: "meta-secret-5150" });
  });

  it("PATCH with null resets a pointer to its initial value; other keys of the patch still change the definition", async () => {
    const res = await t.request("PATCH", `/v3/automations/custom/${id}`, { name: "Tracking changes v2", metadata: { pointers: { since: null, last_id: null } } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await readPointers(t.daemon.store, String(id))).toEqual({});
    expect(await fetchedPointers()).toEqual({ since: INITIAL });
    expect(t.daemon.definitions.effective(await t.daemon.definitions.own("demo", "custom", id)).automation.name).toBe("Tracking changes v2");
  });

  it("refuses a pointer the rules do not define, or a value that is not text, naming the field", async () => {
    const unknown = await t.request("PATCH", `/v3/automations/custom/${id}`, { metadata: { pointers: { until: "x" } } });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toMatch(/metadata\.pointers\.until: the automation has no pointer \\"until\\" \(allowed: since, last_id\)/);
    const wrong = await t.request("PATCH", `/v3/automations/custom/${id}`, { metadata: { pointers: { since: { at: 1 } } } });
    expect(wrong.status).toBe(400);
    expect(JSON.stringify(wrong.body)).toMatch(/metadata\.pointers\.since: must be text, a number or null/);
    expect(await readPointers(t.daemon.store, String(id))).toEqual({});
  });
});

describe("pointers of an installed automation", () => {
  let t: TestDaemon;
  let id: number;

  beforeAll(async () => {
    const published = {
      ...stockDefinition({ name: "Shared shipments", active: false }),
      shared_id: 5150,
      connection: { type: "http", address: "https://api.example.test/shipments", method: "GET", payload: { since: "{{pointer.since}}" }, pointers: { since: { from: "updated_at", initial: INITIAL } } },
    };
    t = await startTestDaemon({ published: { "shared.json": published } });
    const installed = await t.request("POST", "/v3/automations/installed", { shared_id: 5150, active: false, parameters: [] });
    expect(installed.status, JSON.stringify(installed.body)).toBe(200);
    id = Number(installed.body.id);
  });
  afterAll(async () => t.close());

  const fetched = async (): Promise<Record<string, unknown>> => (await t.request("GET", `/v3/automations/installed/${id}`)).body.automation as Record<string, unknown>;

  it("shows its pointers in metadata in the listing and the fetch", async () => {
    expect((await fetched()).metadata).toEqual({ pointers: { since: INITIAL } });
    await writePointers(t.daemon.store, String(id), { since: "2026-02-01T00:00:00Z" });
    const listed = (await t.request("GET", "/v3/automations/installed")).body.automations as Array<Record<string, unknown>>;
    expect(listed.find((a) => a.id === String(id))?.metadata).toEqual({ pointers: { since: "2026-02-01T00:00:00Z" } });
  });

  it("PATCH sets and resets a pointer beside the fields an installer may change, and refuses an unknown one", async () => {
    const set = await t.request("PATCH", `/v3/automations/installed/${id}`, { active: true, metadata: { pointers: { since: "2026-03-01T00:00:00Z" } } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(await readPointers(t.daemon.store, String(id))).toEqual({ since: "2026-03-01T00:00:00Z" });
    expect((await fetched()).active).toBe(true);
    const reset = await t.request("PATCH", `/v3/automations/installed/${id}`, { metadata: { pointers: { since: null } } });
    expect(reset.status).toBe(200);
    expect((await fetched()).metadata).toEqual({ pointers: { since: INITIAL } });
    const unknown = await t.request("PATCH", `/v3/automations/installed/${id}`, { metadata: { pointers: { until: "x" } } });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toMatch(/metadata\.pointers\.until: the automation has no pointer/);
  });
});
