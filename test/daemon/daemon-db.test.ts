import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDaemonDb, type DaemonDb } from "../../src/daemon/daemon-db.js";
import { PgSchedulerState } from "../../src/daemon/scheduler-state-pg.js";
import { openSchedulerState, SqliteSchedulerState } from "../../src/daemon/scheduler-state.js";
import { openStore, type StateStore } from "../../src/state/index.js";
import { PgSchemas } from "../helpers/postgres.js";

const pgs = new PgSchemas();
afterAll(async () => pgs.end());

/** The daemon's tables answer the same in the SQLite file and in a PostgreSQL schema. */
describe.each(["sqlite", "postgres"] as const)("daemon tables on %s", (kind) => {
  let store: StateStore;
  let db: DaemonDb;
  let settings: { dataDir: string; databaseUrl: string | undefined };

  beforeEach(async () => {
    settings = { dataDir: mkdtempSync(path.join(tmpdir(), "conveyor-ddb-")), databaseUrl: kind === "postgres" ? pgs.url() : undefined };
    store = await openStore(settings);
    db = openDaemonDb(settings, store);
  });
  afterEach(async () => {
    await db.close();
    await store.close();
    await pgs.dropAll();
  });

  it("stores definitions with growing ids, unique slugs per account and kind, in id order", async () => {
    const first = await db.definitions.insert({ account: "demo", kind: "custom", slug: "stock", body: { name: "Stock", n: 1 } });
    const second = await db.definitions.insert({ account: "demo", kind: "installed", slug: "stock", sharedId: "7", body: { active: true } });
    const other = await db.definitions.insert({ account: "shop", kind: "custom", slug: "stock", body: { name: "Theirs" }, source: "/a/stock.json", sourceHash: "h1" });
    expect(second.id).toBeGreaterThan(first.id);
    expect(first).toMatchObject({ account: "demo", kind: "custom", slug: "stock", sharedId: null, body: { name: "Stock", n: 1 }, source: null, sourceHash: null });
    expect(other).toMatchObject({ source: "/a/stock.json", sourceHash: "h1" });
    await expect(db.definitions.insert({ account: "demo", kind: "custom", slug: "stock", body: {} })).rejects.toThrow();
    await db.definitions.update(first.id, { slug: "stock-2", body: { name: "Stock", n: 2 }, sourceHash: "h2" });
    const changed = await db.definitions.get(first.id);
    expect(changed).toMatchObject({ slug: "stock-2", body: { name: "Stock", n: 2 }, sourceHash: "h2", created: first.created });
    expect(await db.definitions.bySlug("demo", "custom", "stock-2")).toMatchObject({ id: first.id });
    expect(await db.definitions.bySlug("demo", "custom", "stock")).toBeNull();
    expect((await db.definitions.list("demo", "custom")).map((a) => a.id)).toEqual([first.id]);
    expect((await db.definitions.all()).map((a) => a.id)).toEqual([first.id, second.id, other.id]);
    expect(await db.definitions.delete(second.id)).toBe(true);
    expect(await db.definitions.delete(second.id)).toBe(false);
    expect(await db.definitions.get(second.id)).toBeNull();
    expect(await db.definitions.get(99_999_999_999)).toBeNull();
  });

  it("keeps account rows, alerts and flags; metaInit keeps the first writer's value", async () => {
    await db.accounts.upsert({ api_user: "b-shop", token: "enc:1", created: "2026-01-01T00:00:00.000Z", origin: "cli" });
    await db.accounts.upsert({ api_user: "a-shop", token: "enc:2", created: "2026-01-02T00:00:00.000Z", origin: "cli" });
    await db.accounts.upsert({ api_user: "b-shop", token: "enc:3", created: "2026-03-03T00:00:00.000Z", origin: "settings" });
    expect(await db.accounts.list()).toEqual([
      { api_user: "a-shop", created: "2026-01-02T00:00:00.000Z", origin: "cli" },
      { api_user: "b-shop", created: "2026-01-01T00:00:00.000Z", origin: "settings" },
    ]);
    expect(await db.accounts.token("b-shop")).toBe("enc:3");
    expect(await db.accounts.delete("b-shop")).toBe(true);
    expect(await db.accounts.token("b-shop")).toBeNull();
    expect(await db.alertRef("7", "silence")).toBeNull();
    await db.setAlert("7", "silence", "2026-01-01", "2026-01-05");
    await db.setAlert("7", "silence", "2026-02-01", "2026-02-05");
    expect(await db.alertRef("7", "silence")).toBe("2026-02-01");
    expect(await db.metaInit("fp", "first")).toBe("first");
    expect(await db.metaInit("fp", "second")).toBe("first");
    await db.metaSet("fp", "third");
    expect(await db.metaGet("fp")).toBe("third");
  });

  it("keeps scheduler bookkeeping next to the state, and never moves a fire time backwards", async () => {
    const state = openSchedulerState(settings, store);
    expect(state).toBeInstanceOf(kind === "postgres" ? PgSchedulerState : SqliteSchedulerState);
    expect(await state.lastFireTime("a")).toBeNull();
    await state.setLastFireTime("a", "2026-11-21T03:00:00.000Z");
    await state.setLastFireTime("a", "2026-11-20T03:00:00.000Z");
    expect(await state.lastFireTime("a")).toBe("2026-11-21T03:00:00.000Z");
    // Reopened only while it is still the last one dealt with.
    await state.reopenFireTime("a", "2026-11-20T03:00:00.000Z");
    expect(await state.lastFireTime("a")).toBe("2026-11-21T03:00:00.000Z");
    await state.reopenFireTime("a", "2026-11-21T03:00:00.000Z");
    expect(await state.lastFireTime("a")).toBe("2026-11-21T02:59:59.999Z");
    await state.setLastFireTime("a", "2026-11-21T03:00:00.000Z");
    await state.setLastFullRun("a", "2026-11-21T03:00:01.000Z");
    expect(await state.lastFullRun("a")).toBe("2026-11-21T03:00:01.000Z");
    expect(await state.lastFireTime("a")).toBe("2026-11-21T03:00:00.000Z");
    await state.recordSkip("a", "2026-11-21T04:00:00.000Z", "running");
    await state.recordSkip("a", "2026-11-21T05:00:00.000Z", "running");
    const skips = await (state as SqliteSchedulerState | PgSchedulerState).skips("a");
    expect(skips.map((s) => s.fireTime)).toEqual(["2026-11-21T05:00:00.000Z", "2026-11-21T04:00:00.000Z"]);
    expect(await (state as SqliteSchedulerState | PgSchedulerState).pruneSkips(new Date(Date.now() + 1000))).toBe(2);
    await state.close();
  });
});
