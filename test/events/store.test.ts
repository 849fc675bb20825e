import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDaemonDb, type DaemonDb } from "../../src/daemon/daemon-db.js";
import { EventClaims, MAX_ATTEMPTS } from "../../src/events/claims.js";
import type { IncomingEvent } from "../../src/events/store.js";
import { silentLogger } from "../../src/log.js";
import { RunRecorder } from "../../src/pipeline/recorder.js";
import { openStore, type StateStore } from "../../src/state/index.js";
import { PgSchemas } from "../helpers/postgres.js";

const pgs = new PgSchemas();
afterAll(async () => pgs.end());

function event(n: number, extra: Partial<IncomingEvent> = {}): IncomingEvent {
  return { account: "demo", eventId: `evt_${n}`, webhookId: `msg_${n}`, type: "order.created", orderId: String(100 + n), body: `{"id":"evt_${n}"}`, ...extra };
}

/** The event store answers the same in the SQLite file and in a PostgreSQL schema. */
describe.each(["sqlite", "postgres"] as const)("event store on %s", (kind) => {
  let settings: { dataDir: string; databaseUrl: string | undefined };
  const opened: Array<{ store: StateStore; db: DaemonDb }> = [];
  const open = async (): Promise<{ store: StateStore; db: DaemonDb }> => {
    const store = await openStore(settings);
    const parts = { store, db: openDaemonDb(settings, store) };
    opened.push(parts);
    return parts;
  };

  beforeEach(() => {
    settings = { dataDir: mkdtempSync(path.join(tmpdir(), "conveyor-events-")), databaseUrl: kind === "postgres" ? pgs.url() : undefined };
  });
  afterEach(async () => {
    for (const { db, store } of opened.splice(0)) {
      await db.close();
      await store.close();
    }
    await pgs.dropAll();
  });

  it("stores an event once: the same event id or the same Webhook-Id again stores nothing", async () => {
    const { db } = await open();
    expect(await db.events.record(event(1), ["7", "8"])).toBe(true);
    expect(await db.events.record(event(1, { webhookId: "msg_other" }), ["7"])).toBe(false);
    expect(await db.events.record(event(2, { webhookId: "msg_1" }), ["7"])).toBe(false);
    // Another account may use the same ids.
    expect(await db.events.record(event(1, { account: "shop" }), ["9"])).toBe(true);
    const claims = await db.events.claims();
    expect(claims.map((c) => [c.account, c.eventId, c.automation, c.state])).toEqual([
      ["demo", "evt_1", "7", "pending"],
      ["demo", "evt_1", "8", "pending"],
      ["shop", "evt_1", "9", "pending"],
    ]);
    expect((await db.events.pendingAutomations()).sort()).toEqual(["7", "8", "9"]);
  });

  it("gives each claim to exactly one of two concurrent takers", async () => {
    const a = await open();
    const b = kind === "postgres" ? await open() : a;
    for (let i = 0; i < 200; i++) await a.db.events.record(event(i, { orderId: String(i % 50) }), ["7"]);
    const takes = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).db.events.take("7", `run-${i}`, 40)));
    const ids = takes.flatMap((t) => t.ids);
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
    for (const t of takes) expect(new Set(t.orders).size).toBe(t.orders.length);
    expect(await a.db.events.take("7", "run-late", 40)).toEqual({ ids: [], orders: [] });
    expect(await a.db.events.hasPending("7")).toBe(false);
  });

  it("settles a run's events: done on success, pending again after a failure, failed after the last attempt", async () => {
    const { db, store } = await open();
    const claims = new EventClaims({ store: db.events, logger: silentLogger, getRun: (id) => store.getRun(id), isActive: async () => false });
    await db.events.record(event(1), ["7"]);
    await db.events.record(event(2), ["8"]);
    expect(await claims.take("7", "run-ok")).toEqual({ ids: ["evt_1"], orders: ["101"] });
    await claims.settle("run-ok", "success");
    expect((await db.events.claims("evt_1"))[0]).toMatchObject({ state: "done", runId: "run-ok" });
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      expect((await claims.take("8", `run-${attempt}`)).ids).toEqual(["evt_2"]);
      await claims.settle(`run-${attempt}`, attempt % 2 ? "failed" : "canceled");
      expect((await db.events.claims("evt_2"))[0]).toMatchObject({ state: attempt < MAX_ATTEMPTS ? "pending" : "failed", attempts: attempt, runId: null });
    }
    expect((await claims.take("8", "run-after")).ids).toEqual([]);
  });

  it("at start, hands back the claims of an interrupted run and of a run that never got a record, keeps a queued run's", async () => {
    const { db, store } = await open();
    const queued = new Set(["run-queued"]);
    const claims = new EventClaims({ store: db.events, logger: silentLogger, getRun: (id) => store.getRun(id), isActive: async (id) => queued.has(id) });
    for (let i = 1; i <= 4; i++) await db.events.record(event(i), [String(i)]);
    await claims.take("1", "run-killed");
    await claims.take("2", "run-lost");
    await claims.take("3", "run-queued");
    await claims.take("4", "run-finished");
    const start = { automation: "1", account: "demo", mode: "prod", trigger: "event", diff: true, force: false, notify: false, email: null } as const;
    await RunRecorder.start(store, { ...start, id: "run-killed" });
    await store.markInterrupted(new Date(Date.now() + 60_000));
    const finished = await RunRecorder.start(store, { ...start, automation: "4", id: "run-finished" });
    await finished.finish("success");
    expect(await claims.recover()).toBe(3);
    const states = Object.fromEntries((await db.events.claims()).map((c) => [c.automation, c.state]));
    expect(states).toEqual({ "1": "pending", "2": "pending", "3": "taken", "4": "done" });
  });

  it("prunes settled events older than the retention, never a pending one", async () => {
    const { db } = await open();
    await db.events.record(event(1), ["7"]);
    await db.events.record(event(2), ["8"]);
    await db.events.take("7", "r1", 10);
    await db.events.settle("r1", true, MAX_ATTEMPTS);
    expect(await db.events.prune(new Date(Date.now() - 60_000))).toBe(0);
    expect(await db.events.prune(new Date(Date.now() + 60_000))).toBe(1);
    expect((await db.events.claims()).map((c) => c.eventId)).toEqual(["evt_2"]);
    // Pruned, the id may come again: it is a new event by then.
    expect(await db.events.record(event(1), ["7"])).toBe(true);
  });

  it("drops only the pending claims of the automation last touched before the cutoff", async () => {
    const { db } = await open();
    await db.events.record(event(1), ["7", "8"]);
    await db.events.record(event(2), ["7"]);
    expect((await db.events.take("7", "run-1", 1)).ids).toEqual(["evt_1"]);
    expect(await db.events.dropPending("7", new Date(Date.now() - 60_000))).toEqual([]);
    expect(await db.events.dropPending("7", new Date(Date.now() + 60_000))).toEqual(["evt_2"]);
    const states = (await db.events.claims()).map((c) => [c.eventId, c.automation, c.state]);
    expect(states).toEqual([
      ["evt_1", "7", "taken"],
      ["evt_1", "8", "pending"],
      ["evt_2", "7", "failed"],
    ]);
  });

  it("keeps one registration per account, found by its key", async () => {
    const { db } = await open();
    const row = { account: "demo", endpointId: "ep_1", key: "k1", url: "http://127.0.0.1/v3/events/webhook/k1", eventTypes: ["order.created"], secret: "enc:v1:x", previousSecret: null, updated: "2026-01-01T00:00:00.000Z" };
    await db.events.saveRegistration(row);
    await db.events.saveRegistration({ ...row, endpointId: "ep_2", key: "k2", previousSecret: "enc:v1:old" });
    expect(await db.events.registrationByKey("k1")).toBeNull();
    expect(await db.events.registrationByKey("k2")).toMatchObject({ account: "demo", endpointId: "ep_2", eventTypes: ["order.created"], previousSecret: "enc:v1:old" });
    expect(await db.events.registrations()).toHaveLength(1);
    expect(await db.events.exclusive(async () => "ran")).toBe("ran");
    await db.events.deleteRegistration("demo");
    expect(await db.events.registration("demo")).toBeNull();
  });
});
