import http from "node:http";
import type { DestinationStream } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.js";
import { PgSchemas } from "../helpers/postgres.js";
import { startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

/** Each bulk row takes 0.6 s in the embedded service, so a live run of the three-row feed outlasts a `wait=1`. */
const SLOW = { bulkBatchRows: 1, bulkBatchDelayMs: 600 };

const pgs = new PgSchemas();
afterAll(async () => pgs.end());

describe.each(["sqlite", "postgres"] as const)("?wait= shorter than the run on %s", (kind) => {
  let t: TestDaemon;
  let id = "";
  const lines: string[] = [];
  const sink: DestinationStream = { write: (line: string) => void lines.push(line) };

  beforeAll(async () => {
    const env: Record<string, string> = kind === "postgres" ? { CONVEYOR_DATABASE_URL: pgs.url() } : {};
    t = await startTestDaemon({ definitions: { "stock.json": stockDefinition() }, env, daemon: { embedded: SLOW, logger: createLogger({ level: "debug", destination: sink }) } });
    const list = await t.request("GET", "/v3/automations/custom");
    id = String((list.body.automations as Array<{ id: string }>)[0]?.id);
  });
  afterAll(async () => t.close(30_000));

  function events(name: string): Array<Record<string, unknown>> {
    return lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === name);
  }

  function waitsEnded(runId: string): Array<Record<string, unknown>> {
    return events("run_wait_ended").filter((l) => l.run_id === runId);
  }

  it("answers with the id and state running, then queued for the run behind it, when the time is up", async () => {
    const started = Date.now();
    const first = t.request("GET", `/v3/automations/custom/${id}/run?wait=1`);
    // Queued behind the first: one run of an automation at a time.
    await new Promise((r) => setTimeout(r, 300));
    const second = await t.request("GET", `/v3/automations/custom/${id}/run?debug=1&wait=1`);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ id: expect.any(String), result: "success", state: "queued", run: null });
    expect(second.body.message).toMatch(/still queued after 1 s/);
    const running = await first;
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(running.body).toMatchObject({ id: expect.any(String), result: "success", state: "running" });
    expect(running.body.message).toMatch(/still running after 1 s; GET \/v3\/automations\/runs\//);
    expect(running.body.run).toMatchObject({ id: running.body.id, mode: "prod", state: "running", finished: null });
    expect(waitsEnded(String(running.body.id))).toEqual([expect.objectContaining({ ended: "time_up", state: "running" })]);
    // Both still run to the end: the wait only stopped holding the answer.
    expect(await waitForRun(t, String(running.body.id), 30_000)).toMatchObject({ outcome: "success" });
    expect(await waitForRun(t, String(second.body.id), 30_000)).toMatchObject({ outcome: "success", mode: "debug" });
  }, 60_000);

  it("stops holding a request whose client hung up, long before its wait is over", async () => {
    const before = events("run_requested").length;
    // Its own socket, not fetch's pool: hanging up is then one closed connection and nothing else.
    const client = http.get(`${t.daemon.url}/v3/automations/custom/${id}/run?wait=600`, { headers: t.headers, agent: false });
    const hungUp = new Promise((resolve) => client.on("close", resolve));
    client.on("error", () => undefined);
    for (let i = 0; i < 100 && events("run_requested").length === before; i++) await new Promise((r) => setTimeout(r, 50));
    const runId = String(events("run_requested")[before]?.run_id);
    // Held a moment, so the hang-up reaches a wait in progress.
    await new Promise((r) => setTimeout(r, 200));
    expect(waitsEnded(runId)).toEqual([]);
    client.destroy();
    await hungUp;
    const until = Date.now() + 3_000;
    while (waitsEnded(runId).length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(waitsEnded(runId)).toEqual([expect.objectContaining({ ended: "client_gone" })]);
    expect(await waitForRun(t, runId, 30_000)).toMatchObject({ outcome: "success" });
  }, 60_000);
});

describe("?wait= at shutdown", () => {
  it("answers a held request with the run's state when the daemon stops, instead of holding the shutdown", async () => {
    // With PostgreSQL a run queued behind another stays in the shared queue when this daemon stops fetching: nothing here ends it.
    const t = await startTestDaemon({ definitions: { "stock.json": stockDefinition() }, env: { CONVEYOR_DATABASE_URL: pgs.url() }, daemon: { embedded: SLOW } });
    const list = await t.request("GET", "/v3/automations/custom");
    const id = String((list.body.automations as Array<{ id: string }>)[0]?.id);
    const first = await t.request("GET", `/v3/automations/custom/${id}/run?wait=1`);
    expect(first.body.state).toBe("running");
    const held = t.request("GET", `/v3/automations/custom/${id}/run?debug=1&wait=600`);
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    // The first run takes about 3 s to finish within the grace; the held request must not add its 600 s, nor a keep-alive's 72.
    await t.close(30_000);
    expect(Date.now() - started).toBeLessThan(20_000);
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ result: "success", state: expect.stringMatching(/^(queued|finished)$/) });
    if (answer.body.state === "queued") expect(answer.body.message).toMatch(/was still queued when this daemon began to shut down/);
  }, 90_000);
});
