import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Catalogue } from "../../src/daemon/catalogue.js";
import { openDaemonDb, type DaemonDb } from "../../src/daemon/daemon-db.js";
import { DefinitionService } from "../../src/daemon/definitions.js";
import { DaemonEvents, ORPHAN_GRACE_MS } from "../../src/events/index.js";
import type { IncomingEvent } from "../../src/events/store.js";
import { createLogger } from "../../src/log.js";
import { openStore, type StateStore } from "../../src/state/index.js";

const DEFINITION = {
  name: "Orders on events",
  active: true,
  schedule: "0 3 1 1 *",
  events: ["order.created"],
  type: "orders",
  action: "export",
  connection: { type: "sdsftp", path: "outbox" },
  file_configs: [{ name: "orders.csv", field_map: { ordernumber: "OrderNumber" } }],
};

function event(n: number): IncomingEvent {
  return { account: "demo", eventId: `evt_${n}`, webhookId: `msg_${n}`, type: "order.created", orderId: String(n), body: "{}" };
}

describe("the sweep of waiting events", () => {
  const opened: Array<{ store: StateStore; db: DaemonDb }> = [];
  afterEach(async () => {
    for (const { db, store } of opened.splice(0)) {
      await db.close();
      await store.close();
    }
  });

  it("drops, past the grace, the pending events of an automation that was deleted, and keeps those of one that exists", async () => {
    const settings = { dataDir: mkdtempSync(path.join(tmpdir(), "conveyor-orphans-")), databaseUrl: undefined };
    const store = await openStore(settings);
    const db = openDaemonDb(settings, store);
    opened.push({ store, db });
    const definitions = new DefinitionService(db.definitions, await Catalogue.load(undefined, createLogger({ level: "silent" })), Buffer.alloc(32, 7));
    const kept = await definitions.createCustom("demo", DEFINITION);
    const gone = await definitions.createCustom("demo", { ...DEFINITION, name: "Deleted later" });
    await db.events.record(event(1), [String(kept.id), String(gone.id)]);
    await db.definitions.delete(gone.id);

    let now = Date.now();
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ level: "info", destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
    const events = new DaemonEvents({
      store: db.events,
      definitions,
      logger,
      secretKey: Buffer.alloc(32, 7),
      windowMs: 60_000,
      getRun: (id) => store.getRun(id),
      isQueued: () => false,
      enqueue: () => Promise.reject(new Error("nothing is enqueued within the coalescing window of this test")),
      clientFor: () => Promise.reject(new Error("no service in this test")),
      publicUrl: () => null,
      now: () => now,
    });

    // Within the grace a cluster peer may know a definition this daemon has not read: nothing is dropped.
    await events.sweep();
    expect((await db.events.claims()).map((c) => c.state)).toEqual(["pending", "pending"]);

    now += ORPHAN_GRACE_MS + 1000;
    await events.sweep();
    const claims = await db.events.claims();
    expect(claims.map((c) => [c.automation, c.state])).toEqual([
      [String(kept.id), "pending"],
      [String(gone.id), "failed"],
    ]);
    expect(await db.events.pendingAutomations()).toEqual([String(kept.id)]);
    const warning = lines.find((l) => l.event === "events_dropped");
    expect(warning).toMatchObject({ automation: String(gone.id), events: ["evt_1"] });
    events.stop();
  });
});
