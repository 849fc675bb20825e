import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { signature } from "../../src/embedded/webhook-dispatch.js";
import { startPartnerApi, type PartnerApi } from "../../samples/partner-api.js";
import { newOrder, PARTNER_SECRET } from "./fixtures/order-created.js";

/**
 * The Must show on the embedded default: the daemon answers the
 * order.created webhook and is killed with SIGKILL before any run starts (a
 * 30 s window); restarted on the same data folder, it delivers the order to
 * the partner exactly once, and a repeat of that webhook is a duplicate.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const children: ChildProcess[] = [];
const dirs: string[] = [];
let api: PartnerApi | undefined;

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await api?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Up {
  url: string;
  service: string;
  headers: Record<string, string>;
}

function spawnDaemon(dir: string, env: Record<string, string>): { proc: ChildProcess; exited: Promise<unknown>; up: Promise<Up> } {
  const proc = spawn(process.execPath, ["--import", "tsx", "test/events/fixtures/events-child.ts"], { cwd: ROOT, env: { ...process.env, DAEMON_DIR: dir, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  children.push(proc);
  const exited = new Promise((resolve) => proc.on("exit", resolve));
  const up = new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout ?? process.stdin }).once("line", resolve);
    void exited.then(() => reject(new Error("the daemon exited before it was up")));
  }).then((line) => JSON.parse(line) as Up);
  return { proc, exited, up };
}

async function until<T>(what: string, probe: () => T | null | Promise<T | null>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const value = await probe();
    if (value !== null) return value;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms`);
}

/** A read of a SQLite file another process writes; opened per probe so a killed writer leaves no handle behind. */
function read<T>(file: string, sql: string): T[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all() as T[];
  } catch {
    // The file exists but its tables do not yet.
    return [];
  } finally {
    db.close();
  }
}

describe("kill -9 right after the daemon answered the webhook", () => {
  it("restarted on the same data folder, the order reaches the partner once; the webhook's repeat is a duplicate", async () => {
    api = await startPartnerApi({ port: 0, clientSecret: PARTNER_SECRET });
    const partner = api;
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-events-kill-"));
    dirs.push(dir);
    const stateDb = path.join(dir, "data", "state.db");
    const serviceDb = path.join(dir, "data", "embedded", "service.db");
    const env = { PARTNER_URL: partner.url };

    const first = spawnDaemon(dir, { ...env, EVENT_WINDOW: "30s" });
    const up = await first.up;
    const key = await until("the webhook endpoint's registration", () => read<{ key: string }>(stateDb, "SELECT key FROM daemon_webhooks")[0]?.key ?? null);
    const created = await fetch(`${up.service}/v3/orders`, { method: "POST", headers: { ...up.headers, "Content-Type": "application/json" }, body: JSON.stringify(newOrder("KILL-5001")) });
    expect(created.status, await created.clone().text()).toBeLessThan(300);

    // The service writes the attempt once the daemon's 2xx arrived: that is "answered".
    const answered = await until("the delivery answered 2xx", () => {
      const rows = read<{ msg_id: string; attempts: string }>(serviceDb, "SELECT msg_id, attempts FROM webhook_deliveries WHERE event_type LIKE '%order.created'");
      const ok = rows.find((r) => (JSON.parse(r.attempts) as Array<{ status: string }>).some((a) => a.status === "success"));
      return ok ?? null;
    });
    first.proc.kill("SIGKILL");
    await first.exited;

    expect(JSON.parse(answered.attempts)).toEqual([expect.objectContaining({ status: "success", http_status: 200 })]);
    expect(read<{ state: string }>(stateDb, "SELECT state FROM event_claims")).toEqual([{ state: "pending" }]);
    expect(read(stateDb, "SELECT id FROM runs")).toEqual([]);
    expect(partner.state.orders).toEqual([]);

    const second = spawnDaemon(dir, { ...env, EVENT_WINDOW: "500ms" });
    const restarted = await second.up;
    await until("the order at the partner", () => (partner.state.orders.length > 0 ? true : null));
    // A few seconds more: no second run, no second request.
    await new Promise((r) => setTimeout(r, 4_000));
    expect((partner.state.orders as Array<{ order_id: string }>).map((o) => o.order_id)).toEqual(["KILL-5001"]);
    const claims = read<{ state: string; run_id: string }>(stateDb, "SELECT state, run_id FROM event_claims");
    expect(claims).toEqual([{ state: "done", run_id: expect.any(String) }]);
    const run = (await (await fetch(`${restarted.url}/v3/automations/runs/${claims[0]?.run_id ?? ""}`, { headers: restarted.headers })).json()) as Record<string, unknown>;
    expect(run).toMatchObject({ trigger: "event", outcome: "success" });

    // The service's retry of the same delivery (same Webhook-Id, same body, signed anew) is answered duplicate.
    const [message] = read<{ payload: string }>(serviceDb, `SELECT payload FROM webhook_messages WHERE id = '${answered.msg_id}'`);
    const [endpoint] = read<{ secret: string }>(serviceDb, "SELECT secret FROM webhook_endpoints");
    const ts = Math.floor(Date.now() / 1000);
    const body = message?.payload ?? "";
    const again = await fetch(`${restarted.url}/v3/events/webhook/${key}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Webhook-Id": answered.msg_id, "Webhook-Timestamp": String(ts), "Webhook-Signature": signature(endpoint?.secret ?? "", answered.msg_id, ts, body) },
      body,
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ status: "duplicate" });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(partner.state.orders).toHaveLength(1);
    expect(read(stateDb, "SELECT state FROM event_claims")).toHaveLength(1);
    second.proc.kill("SIGKILL");
    await second.exited;
  }, 120_000);
});
