import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startPartnerApi } from "../../samples/partner-api.js";
import { newOrder, PARTNER_SECRET } from "./fixtures/order-created.js";
import { freePort, read, spawnEventsDaemon, spawnServiceProcess, until } from "./fixtures/events-process.js";

export interface BurstOptions {
  orders: number;
  perSecond: number;
  /** CONVEYOR_EVENT_WINDOW, e.g. "5s". */
  window: string;
  /** How long after the last order the partner may still receive. */
  settleMs: number;
  /** The service in a process of its own (as a remote service is) instead of embedded in the daemon's. */
  serviceProcess?: boolean;
}

export interface BurstResult {
  created: number;
  /** How long placing them took (the pace held, or not). */
  createdMs: number;
  /** Orders the partner received exactly once. */
  delivered: number;
  duplicates: string[];
  missing: string[];
  /** Milliseconds from the answer of the order's POST to the partner's receipt, sorted. */
  latenciesMs: number[];
  eventRuns: number;
  otherRuns: number;
  /** Event runs that found their batch taken by an earlier run (outcome nothing): a request folded too late, harmless. */
  emptyRuns: number;
  /** Runs ending otherwise than success or (empty) nothing. */
  failedRuns: Array<{ id: string; trigger: string; outcome: string | null; error: unknown }>;
  /** From the first order's POST to the last receipt. */
  elapsedMs: number;
}

/**
 * What a shop does to the order-created sample: orders placed one by one at a
 * steady pace through `POST /v3/orders` of the embedded service, on a daemon
 * with the partner stand-in; then every order's receipt is waited for (or
 * `settleMs` after the last one) and counted. The daemon runs in its own
 * process, as `npm start` runs it, so the shop's load is not on its loop. Shared by the burst test and
 * `npm run bench:events`.
 */
export async function runBurst(o: BurstOptions): Promise<BurstResult> {
  const api = await startPartnerApi({ port: 0, clientSecret: PARTNER_SECRET });
  const dir = mkdtempSync(path.join(tmpdir(), "conveyor-events-burst-"));
  const service = o.serviceProcess ? await spawnServiceProcess(dir) : null;
  const remote: Record<string, string> = service ? { SERVICE_URL: service.url, SERVICE_USER: service.apiUser, SERVICE_TOKEN: service.apiToken, DAEMON_PORT: String(await freePort()) } : {};
  const daemon = spawnEventsDaemon(dir, { PARTNER_URL: api.url, EVENT_WINDOW: o.window, ...remote });
  try {
    const up = await daemon.up;
    const received = new Map<string, number[]>();
    const orders = api.state.orders;
    const push = orders.push.bind(orders);
    // The receipt's moment is when the stand-in takes the body, not when a poll sees it.
    orders.push = (...bodies: unknown[]): number => {
      for (const b of bodies) {
        const id = String((b as { order_id?: unknown }).order_id);
        received.set(id, [...(received.get(id) ?? []), performance.now()]);
      }
      return push(...bodies);
    };
    await until("the webhook endpoint's registration", () => read<{ key: string }>(path.join(dir, "data", "state.db"), "SELECT key FROM daemon_webhooks")[0] ?? null, 15_000);

    const headers = { ...up.headers, "Content-Type": "application/json" };
    const answeredAt = new Map<string, number>();
    const numbers = Array.from({ length: o.orders }, (_, i) => `BURST-${String(10_000 + i)}`);
    const start = performance.now();
    const posts = numbers.map(async (n, i) => {
      const due = start + (i * 1000) / o.perSecond;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      const res = await fetch(`${up.service}/v3/orders`, { method: "POST", headers, body: JSON.stringify(newOrder(n)) });
      if (res.status >= 300) throw new Error(`POST /v3/orders answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      answeredAt.set(n, performance.now());
    });
    await Promise.all(posts);
    const createdMs = performance.now() - start;
    const deadline = performance.now() + o.settleMs;
    while (numbers.some((n) => !received.has(n)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // Any second delivery would come from a second run: give one a window and a bit to show up.
    await new Promise((r) => setTimeout(r, 2_000));

    // The sample's catch-up run (every 15 minutes) may have started during the burst: a run still running has not
    // failed, so the list is taken once every run has ended, or after a bound that shows one that never does.
    type Listed = { runs: Array<{ id: string; trigger: string; outcome: string | null; error: unknown }> };
    const list = async (): Promise<Listed> => (await (await fetch(`${up.url}/v3/automations/runs?limit=1000`, { headers: up.headers })).json()) as Listed;
    const ended = await until("the end of every run", async () => {
      const listed = await list();
      return listed.runs.every((r) => r.outcome !== null) ? listed : null;
    }, 30_000).catch(() => null);
    const runs = (ended ?? (await list())).runs;
    const latenciesMs = numbers.flatMap((n) => {
      const first = received.get(n)?.[0];
      const answered = answeredAt.get(n);
      return first === undefined || answered === undefined ? [] : [first - answered];
    });
    const lastReceipt = Math.max(...[...received.values()].map((times) => times[0] ?? 0));
    return {
      created: numbers.length,
      createdMs,
      delivered: numbers.filter((n) => received.get(n)?.length === 1).length,
      duplicates: numbers.filter((n) => (received.get(n)?.length ?? 0) > 1),
      missing: numbers.filter((n) => !received.has(n)),
      latenciesMs: latenciesMs.sort((a, b) => a - b),
      eventRuns: runs.filter((r) => r.trigger === "event").length,
      otherRuns: runs.filter((r) => r.trigger !== "event").length,
      emptyRuns: runs.filter((r) => r.trigger === "event" && r.outcome === "nothing").length,
      failedRuns: runs.filter((r) => r.outcome !== "success" && r.outcome !== "nothing").map((r) => ({ id: r.id, trigger: r.trigger, outcome: r.outcome, error: r.error })),
      elapsedMs: lastReceipt - start,
    };
  } finally {
    daemon.proc.kill("SIGTERM");
    await daemon.exited;
    service?.proc.kill("SIGTERM");
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The value below which `p` of the sorted values lie (nearest rank). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
}
