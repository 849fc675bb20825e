import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Automation } from "../../../src/definition/index.js";
import { runAutomation } from "../../../src/pipeline/run.js";
import { readPointers } from "../../../src/pointers/index.js";
import { PgSchemas } from "../../helpers/postgres.js";
import { openHarness, type Harness } from "../harness.js";

/**
 * Pointers over a real http import (node:http on loopback serving JSON
 * records) into the embedded service: stored when a live run commits, left
 * alone by a failed, canceled or debug run. SQLite and PostgreSQL state both.
 */

interface Feed {
  status: number;
  records: Array<Record<string, string>>;
}

const FIRST = [
  { sku: "A1", title: "One", id: "9", updated_at: "2026-01-03T10:00:00Z" },
  { sku: "A2", title: "Two", id: "10", updated_at: "2026-01-05T08:30:00Z" },
  { sku: "A3", title: "Three", id: "7", updated_at: "2026-01-04T00:00:00Z" },
];
const INITIAL = "2026-01-01T00:00:00Z";

const pgs = new PgSchemas();
afterAll(async () => {
  await pgs.end();
});

const STATES: Array<[string, () => Record<string, string>]> = [
  ["sqlite", () => ({})],
  ["postgres", () => ({ CONVEYOR_DATABASE_URL: pgs.url() })],
];

describe.each(STATES)("pointers with %s state", (_state, stateEnv) => {
  let h: Harness;
  let server: http.Server;
  const feed: Feed = { status: 200, records: FIRST };

  beforeEach(async () => {
    feed.status = 200;
    feed.records = FIRST;
    h = await openHarness({ CONVEYOR_ALLOW_PRIVATE_HOSTS: "true", ...stateEnv() });
    server = http.createServer((_req, res) => {
      res.statusCode = feed.status;
      res.setHeader("content-type", "application/json");
      res.end(feed.status === 200 ? JSON.stringify(feed.records) : '{"error":"down"}');
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
  });

  afterEach(async () => {
    server.close();
    await h.close();
  });

  function automation(fileConfig: Record<string, unknown> = {}): Automation {
    const { port } = server.address() as AddressInfo;
    return h.automation(
      { name: "records.json", format: "json", field_map: { guid: "sku", title: "title" }, create: "add", update: "edit", ...fileConfig },
      {
        connection: {
          type: "http",
          address: `http://127.0.0.1:${port}/records.json`,
          method: "GET",
          payload: {},
          pointers: { since: { from: "updated_at", initial: INITIAL }, top_id: { from: "id" }, last_id: { from: "id", keep: "last" } },
        },
      },
    );
  }

  const stored = (key = "pointers-test"): Promise<Record<string, string>> => readPointers(h.worker.env.store, key);

  it("a successful live run stores the largest updated_at, the largest id (as a number) and the last id", async () => {
    const run = await h.run(automation(), { key: "pointers-test" });
    expect(run.outcome).toBe("success");
    expect(await stored()).toEqual({ since: "2026-01-05T08:30:00Z", top_id: "10", last_id: "7" });
    // Unchanged records count as read: a second run over the same records keeps the same values.
    feed.records = [...FIRST, { sku: "A4", title: "Four", id: "11", updated_at: "2026-01-02T00:00:00Z" }];
    const again = await h.run(automation(), { key: "pointers-test", diff: true });
    expect(again.outcome).toBe("success");
    expect(again.counts.unchanged).toBe(3);
    // max never goes back (an older updated_at), last follows the feed.
    expect(await stored()).toEqual({ since: "2026-01-05T08:30:00Z", top_id: "11", last_id: "11" });
  });

  it("a failed run (the download fails) leaves the pointers where they were", async () => {
    expect((await h.run(automation(), { key: "pointers-test" })).outcome).toBe("success");
    const before = await stored();
    feed.status = 500;
    feed.records = [{ sku: "A9", title: "Nine", id: "99", updated_at: "2026-02-01T00:00:00Z" }];
    const run = await h.run(automation(), { key: "pointers-test" });
    expect(run.outcome).toBe("failed");
    expect(await stored()).toEqual(before);
  });

  it("a run stopped by a guard after reading every record stores nothing", async () => {
    feed.records = [...FIRST.slice(0, 1), { sku: "", title: "no id", id: "50", updated_at: "2026-03-01T00:00:00Z" }];
    const run = await h.run(automation({ error_limit: "0" }), { key: "pointers-test" });
    expect(run.outcome).toBe("failed");
    expect(run.guard?.name).toBe("error_limit");
    expect(await stored()).toEqual({});
  });

  it("a partial run (a row in error among applied ones) stores what it read, the row in error included", async () => {
    feed.records = [...FIRST, { sku: "", title: "no id", id: "50", updated_at: "2026-03-01T00:00:00Z" }];
    const run = await h.run(automation({ error_limit: "50%" }), { key: "pointers-test" });
    expect(run.outcome).toBe("partial");
    expect(await stored()).toMatchObject({ since: "2026-03-01T00:00:00Z", top_id: "50" });
  });

  it("a debug run and a diff debug run store nothing, and show what they read in pointers.json", async () => {
    const debug = await h.run(automation(), { key: "pointers-test", mode: "debug" });
    expect(debug.outcome).toBe("success");
    expect(debug.debug_files).toContain("pointers.json");
    const file = await h.worker.env.store.getDebugFile(debug.id, "pointers.json");
    expect(JSON.parse((await buffer(file?.open() ?? Readable.from([]))).toString("utf8"))).toEqual({ stored: {}, read: { since: "2026-01-05T08:30:00Z", top_id: "10", last_id: "7" } });
    expect((await h.run(automation(), { key: "pointers-test", mode: "debug", diff: true })).outcome).toBe("success");
    expect(await stored()).toEqual({});
  });

  it("a run canceled once its records are read stores nothing", async () => {
    const controller = new AbortController();
    const run = await runAutomation(h.worker.env, {
      key: "pointers-test",
      automation: automation(),
      mode: "prod",
      trigger: "manual",
      diff: false,
      force: false,
      notify: false,
      email: null,
      stabilityPollMs: 10,
      signal: controller.signal,
      // The plan has every record: cancel before anything is applied or committed.
      progress: (p) => {
        if (p.stage === "apply") controller.abort(new Error("canceled by the test"));
      },
    });
    expect(run.outcome).toBe("canceled");
    expect(await stored()).toEqual({});
    // The next run reads the same range and stores it.
    expect((await h.run(automation(), { key: "pointers-test" })).outcome).toBe("success");
    expect(await stored()).toMatchObject({ since: "2026-01-05T08:30:00Z" });
  });

  it("a column the records lack fails the run, naming the pointer", async () => {
    const { port } = server.address() as AddressInfo;
    const csvRun = h.automation(
      { name: "records.csv", field_map: { guid: "sku", title: "title" }, create: "add" },
      { connection: { type: "http", address: `http://127.0.0.1:${port}/records.csv`, method: "GET", payload: {}, pointers: { since: { from: "changed" } } } },
    );
    feed.records = [];
    server.removeAllListeners("request");
    server.on("request", (_req: http.IncomingMessage, res: http.ServerResponse) => res.end("sku,title,updated_at\nA1,One,2026-01-03\n"));
    const run = await h.run(csvRun, { key: "pointers-test" });
    expect(run.outcome).toBe("failed");
    expect(run.error?.message).toMatch(/connection\.pointers\.since\.from: .* no column "changed"/);
    expect(await stored()).toEqual({});
  });
});
