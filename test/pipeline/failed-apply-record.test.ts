import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSettings } from "../../src/config.js";
import { silentLogger } from "../../src/log.js";
import { runAutomation } from "../../src/pipeline/run.js";
import type { RunRecord } from "../../src/state/index.js";
import { openWorker, type Worker } from "../../src/worker.js";
import { csv, openHarness, type Harness } from "./harness.js";

/**
 * A run that fails mid-apply, its process alive: the service took the
 * second bulk file as a job but its status can no longer be read (a loopback
 * proxy in front of the embedded service answers 404 for it). The run ends
 * partial, and its record says what the service confirmed (the first file's
 * rows) and names the file whose result is unknown, with its job.
 */
describe("a live run whose second bulk file's result cannot be read", () => {
  let h: Harness;
  let proxy: Server;
  let worker: Worker;
  const jobs: string[] = [];

  beforeAll(async () => {
    h = await openHarness();
    const target = h.worker.embedded?.url ?? "";
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const job = /^\/v1\/bulk\/results\/([^/?]+)/.exec(req.url ?? "")?.[1];
        if (job !== undefined && job !== "cancel" && !jobs.includes(job)) jobs.push(job);
        if (job !== undefined && jobs.indexOf(job) === 1) {
          res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ result: "error", message: "no such bulk file" }));
          return;
        }
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "content-length") headers[k] = v;
        const body = chunks.length ? Buffer.concat(chunks) : undefined;
        fetch(`${target}${req.url ?? "/"}`, { method: req.method, headers, body })
          .then(async (answer) => res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" }).end(Buffer.from(await answer.arrayBuffer())))
          .catch(() => res.writeHead(502).end());
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const settings = loadSettings({
      cwd: h.dir,
      env: {
        CONVEYOR_DATA_DIR: path.join(h.dir, "proxied"),
        CONVEYOR_SERVICE_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        CONVEYOR_API_USER: h.worker.env.account,
        CONVEYOR_API_TOKEN: h.worker.embedded?.apiToken ?? "",
        CONVEYOR_STORAGE: h.worker.env.settings.storage,
        CONVEYOR_READ_LIMIT: "100000",
        CONVEYOR_WRITE_LIMIT: "100000",
        CONVEYOR_BULK_ROWS: "5",
        CONVEYOR_LOG_LEVEL: "silent",
      },
    });
    worker = await openWorker(settings, silentLogger);
  });

  afterAll(async () => {
    await worker?.close();
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
    await h.close();
  });

  it("ends partial, and its record names what the service confirmed and the file whose result is unknown", async () => {
    h.writeFeed("feed-1.csv", csv(["guid", "title"], Array.from({ length: 15 }, (_, i) => [`F${i}`, `Failing ${i}`])));
    const automation = h.automation({ name: "feed-1\\.csv", create: "add", field_map: { guid: "guid", title: "title" } });
    const record: RunRecord = await runAutomation(worker.env, { key: automation.slug, automation, mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null, stabilityPollMs: 10 });
    expect(record.outcome).toBe("partial");
    expect(record.applied).toEqual({ files: 1, planned_files: 3, created: 5, updated: 0, removed: 0, failed: 0 });
    expect(record.unconfirmed_files).toEqual([{ name: "bulk-2.csv", rows: 5, job: jobs[1] }]);
    // The stored record says the same as the one returned.
    const stored = await worker.env.store.getRun(record.id);
    expect(stored?.unconfirmed_files).toEqual(record.unconfirmed_files);
    expect(stored?.applied).toEqual(record.applied);
    // What the record says confirmed is what the service holds of the first file; the second job ran on regardless.
    expect([...h.items().keys()].filter((g) => ["F0", "F1", "F2", "F3", "F4"].includes(g))).toHaveLength(5);
  });
});
