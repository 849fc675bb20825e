import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadSettings } from "../../src/config.js";
import { silentLogger } from "../../src/log.js";
import { openWorker } from "../../src/worker.js";
import { csv } from "./harness.js";

/**
 * The process killed between apply and commit (SIGKILL, as an OOM kill or a
 * power cut): the service has the changes, the snapshot and the ledger do
 * not. The next run must finish the job and leave service and state right.
 */
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-crash-"));
const dataDir = path.join(dir, "data");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", ...args],
      { env: { ...process.env, CONVEYOR_DATA_DIR: dataDir, CONVEYOR_READ_LIMIT: "100000", CONVEYOR_WRITE_LIMIT: "100000", ...env }, timeout: 120_000 },
      (err, stdout, stderr) => {
        const e = err as (Error & { code?: number | string; signal?: string }) | null;
        resolve({ code: e ? (typeof e.code === "number" ? e.code : null) : 0, signal: e?.signal ?? null, stdout, stderr });
      },
    );
  });
}

describe("a crash between apply and commit", () => {
  it("is finished by the next run: service, snapshot and ledger end right", async () => {
    const feeds = path.join(dataDir, "storage", "demo", "feeds");
    mkdirSync(feeds, { recursive: true });
    const rows = Array.from({ length: 30 }, (_, i) => [`C${i}`, `Crash part ${i}`, String(i), "1.5"]);
    const feed = path.join(feeds, "feed-1.csv");
    writeFileSync(feed, csv(["guid", "title", "stock", "cost"], rows));
    utimesSync(feed, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const definition = path.join(dir, "crash.json");
    writeFileSync(definition, JSON.stringify({
      name: "Crash test", slug: "crash-test", active: true, schedule: "0 * * * *", type: "products", action: "import",
      connection: { type: "sdsftp", path: "feeds" },
      file_configs: [{ name: "feed-1\\.csv", select: "new", after_import: "move:done", identifier: "guid", create: "add", update: "edit",
        field_map: { guid: "guid", title: "title", stock: "stock", cost: "cost" } }],
    }));

    const crashed = await cli(["run", definition, "--json"], { CONVEYOR_FAULT: "after-apply" });
    expect(crashed.signal).toBe("SIGKILL");

    const settings = loadSettings({ cwd: dir, env: { CONVEYOR_DATA_DIR: dataDir, CONVEYOR_READ_LIMIT: "100000", CONVEYOR_WRITE_LIMIT: "100000" } });
    let worker = await openWorker(settings, silentLogger);
    // The service has the changes; the snapshot and the ledger do not; the file is still there.
    const items = worker.embedded?.context.db.prepare("SELECT count(*) AS n FROM items").get() as { n: number };
    expect(items.n).toBe(30);
    expect(await worker.env.store.snapshotCount("crash-test#0")).toBe(0);
    expect(readdirSync(feeds)).toEqual(["feed-1.csv"]);
    const open = (await worker.env.store.listRuns({ automation: "crash-test" }))[0];
    expect(open?.outcome).toBeNull();
    await worker.close();

    const again = await cli(["run", definition, "--json", "--diff"]);
    expect(again.code, again.stderr).toBe(0);
    const run = JSON.parse(again.stdout) as { outcome: string; counts: Record<string, number> };
    expect(run.outcome).toBe("success");
    // Now in scope, the records are edits, not creates that would fail as duplicates.
    expect(run.counts).toMatchObject({ rows: 30, create: 0, update: 30, failed: 0 });

    worker = await openWorker(settings, silentLogger);
    expect(await worker.env.store.snapshotCount("crash-test#0")).toBe(30);
    expect(readdirSync(feeds)).toEqual(["done"]);
    const item = worker.embedded?.context.db.prepare("SELECT fields FROM items WHERE guid = 'C7'").get() as { fields: string };
    expect(JSON.parse(item.fields)).toMatchObject({ stock: "7", cost: "1.5", title: "Crash part 7" });
    // The crashed run is marked interrupted once its heartbeat is stale.
    const marked = await worker.env.store.markInterrupted(new Date(Date.now() + 60_000));
    expect(marked.map((r) => r.id)).toContain(open?.id);
    expect((await worker.env.store.getRun(open?.id ?? ""))?.error?.code).toBe("interrupted");
    await worker.close();
  });
});
