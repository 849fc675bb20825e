import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openClusterEnv, until, writeDefinitions, type ClusterEnv, type DaemonProcess } from "./daemons.js";
import { freshSchema, PG_URL } from "./pg-env.js";

const AUTOMATIONS = 200;
const FIRES = 5;
const MINUTE = 60_000;

function definition(i: number): Record<string, unknown> {
  const n = String(i).padStart(3, "0");
  return {
    name: `Tick ${n}`,
    active: true,
    schedule: "* * * * *",
    type: "products",
    action: "import",
    // No such file: each run lists the storage folder and ends with "nothing", so 200 a minute stay cheap.
    connection: { type: "sdsftp", path: "feeds" },
    file_configs: [{ name: `absent-${n}\\.csv`, min_age: 0, require_file: false, identifier: "sku", update: "edit", field_map: { sku: "sku" } }],
  };
}

interface Run {
  id: string;
  automation: string;
  trigger: string;
  started: string;
  finished: string | null;
  outcome: string | null;
}

describe("three daemons, 200 automations firing every minute for five minutes", () => {
  const db = freshSchema("sched");
  let env: ClusterEnv | undefined;
  afterAll(async () => {
    await env?.close();
    await db.drop();
  });

  it("every fire time ran exactly once and no automation ran twice at once", async () => {
    env = await openClusterEnv(db.url, { readLimit: 1_000_000, writeLimit: 1_000_000 });
    const folder = writeDefinitions(env.dir, Object.fromEntries(Array.from({ length: AUTOMATIONS }, (_, i) => [`tick-${i}.json`, definition(i)])));
    const daemons: DaemonProcess[] = [await env.spawnDaemon("a", { CONVEYOR_AUTOMATIONS: folder, CONVEYOR_CONCURRENCY: "8" })];
    daemons.push(...(await Promise.all(["b", "c"].map((name) => env?.spawnDaemon(name, { CONVEYOR_CONCURRENCY: "8" }) ?? Promise.reject(new Error("no env"))))));
    const allUp = Date.now();
    const first = Math.ceil((allUp + 1_000) / MINUTE) * MINUTE;
    const fireTimes = Array.from({ length: FIRES }, (_, i) => new Date(first + i * MINUTE).toISOString());
    const last = first + (FIRES - 1) * MINUTE;
    await new Promise((r) => setTimeout(r, Math.max(0, last - Date.now())));

    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const schema = `"${db.schema}"`;
      // Each fire time of the window is claimed, and each claim's run (or skip) is settled.
      let status = "";
      await until(
        "every fire time of the window to be claimed and its run finished",
        async () => {
          const row = await client.query<{ claimed: number; skipped: number; unrecorded: number; open: number }>(
            `SELECT count(*)::int AS claimed, count(c.skipped)::int AS skipped,
                    count(*) FILTER (WHERE c.skipped IS NULL AND r.id IS NULL)::int AS unrecorded,
                    count(*) FILTER (WHERE r.id IS NOT NULL AND r.outcome IS NULL)::int AS open
             FROM ${schema}.fire_claims c LEFT JOIN ${schema}.runs r ON r.id = c.run_id WHERE c.fire_time = ANY($1::timestamptz[])`,
            [fireTimes],
          );
          const s = row.rows[0];
          status = JSON.stringify(s);
          return s && s.claimed === AUTOMATIONS * FIRES && s.unrecorded === 0 && s.open === 0;
        },
        90_000,
        1_000,
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}: ${status}`);
      });
      await Promise.all(daemons.map((d) => d.stop()));

      const claims = await client.query<{ automation: string; fire_time: Date; run_id: string | null; skipped: string | null }>(
        `SELECT automation, fire_time, run_id, skipped FROM ${schema}.fire_claims WHERE fire_time = ANY($1::timestamptz[])`,
        [fireTimes],
      );
      const runs = (await client.query<{ body: Run }>(`SELECT body FROM ${schema}.runs`)).rows.map((r) => (typeof r.body === "string" ? (JSON.parse(r.body) as Run) : r.body));
      const byId = new Map(runs.map((r) => [r.id, r]));
      const automations = new Set(runs.map((r) => r.automation));
      expect(automations.size).toBe(AUTOMATIONS);

      // Exactly one claim per automation and fire time (the primary key makes a second impossible), each ran, none skipped.
      expect(claims.rows).toHaveLength(AUTOMATIONS * FIRES);
      expect(claims.rows.filter((c) => c.skipped !== null)).toEqual([]);
      for (const claim of claims.rows) {
        const run = claim.run_id ? byId.get(claim.run_id) : undefined;
        expect(run, `${claim.automation} @ ${claim.fire_time.toISOString()}`).toBeDefined();
        expect(run?.automation).toBe(claim.automation);
        expect(run?.outcome, JSON.stringify((run as { error?: unknown } | undefined)?.error)).toBe("nothing");
        // A fire time's run starts at or after it, and before the next one.
        const started = Date.parse(run?.started ?? "");
        expect(started).toBeGreaterThanOrEqual(claim.fire_time.getTime() - 1_000);
        expect(started).toBeLessThan(claim.fire_time.getTime() + MINUTE);
      }
      // Every scheduled run in the window belongs to exactly one claim: no fire time ran twice.
      const windowRuns = runs.filter((r) => r.trigger === "schedule" && Date.parse(r.started) >= first - 1_000 && Date.parse(r.started) < last + MINUTE);
      expect(windowRuns).toHaveLength(AUTOMATIONS * FIRES);
      const claimedIds = new Set(claims.rows.map((c) => c.run_id));
      expect(windowRuns.filter((r) => !claimedIds.has(r.id))).toEqual([]);

      // No two runs of one automation overlap, over everything the daemons ran.
      const perAutomation = new Map<string, Run[]>();
      for (const run of runs) perAutomation.set(run.automation, [...(perAutomation.get(run.automation) ?? []), run]);
      for (const list of perAutomation.values()) {
        list.sort((x, y) => Date.parse(x.started) - Date.parse(y.started));
        for (let i = 1; i < list.length; i++) {
          expect(Date.parse(list[i]?.started ?? ""), `${list[i]?.automation}`).toBeGreaterThanOrEqual(Date.parse(list[i - 1]?.finished ?? ""));
        }
      }
      // The work spread over the daemons: each of them ran some of it.
      const started = daemons.map((d) => d.events.filter((e) => e.event === "run_started").length);
      for (const n of started) expect(n).toBeGreaterThan(0);
      console.info(`runs started per daemon: ${started.join(", ")}; runs in the window: ${windowRuns.length}`);
    } finally {
      await client.end();
    }
  }, 8 * MINUTE);
});
