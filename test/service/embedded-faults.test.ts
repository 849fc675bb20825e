import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedService, type EmbeddedService } from "../../src/embedded/index.js";
import { ServiceClient } from "../../src/service/client.js";
import { TokenBucketLimiter } from "../../src/service/limiter.js";

let dir = "";
let service: EmbeddedService;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "conveyor-svcf-"));
  // The seed's limits lowered by settings, so a storm fits in a test.
  service = await startEmbeddedService({ dataDir: dir, apiUser: "demo", apiToken: "emb-f-t0ken-123456", readLimit: 1_000, writeLimit: 5 });
});
afterAll(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A TCP proxy in front of the embedded service that lets the first
 * `POST /v1/bulk` through and then cuts the connection instead of relaying
 * the answer: the service has the upload, the client never hears so.
 */
async function answerLosingProxy(target: string): Promise<{ url: string; close: () => Promise<void>; cut: () => number }> {
  const { hostname, port } = new URL(target);
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let dropAnswer = false;
    client.on("data", (chunk: Buffer) => {
      if (cuts === 0 && chunk.subarray(0, 20).toString("latin1").startsWith("POST /v1/bulk ")) dropAnswer = true;
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (dropAnswer) {
        cuts += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut: () => cuts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("faults against the embedded service", () => {
  it("a bulk upload whose answer is lost is applied once", async () => {
    const proxy = await answerLosingProxy(service.url);
    try {
      const client = new ServiceClient({
        baseUrl: proxy.url,
        apiUser: service.apiUser,
        apiToken: service.apiToken,
        limiter: new TokenBucketLimiter({ limits: { write: 5, read: 1_000 } }),
        retry: { baseDelayMs: 20, maxDelayMs: 100 },
      });
      const file = path.join(dir, "lost.csv");
      writeFileSync(file, "action,guid,title\nadd,L-1,One\nadd,L-2,Two\nadd,L-3,Three\n");
      const submitted = await client.submitBulk(file, { name: "lost-answer-1", baseDelayMs: 20 });
      expect(proxy.cut()).toBe(1);
      const status = await client.waitBulk(submitted.bulk_file, { pollMs: 50 });
      // Sent twice, the adds of the second copy would have failed as duplicates.
      expect(status).toMatchObject({ status: "complete", rows: 3, succeeded: 3, failed: 0 });
      const today = new Date().toISOString().slice(0, 10);
      expect((await client.bulkJobs(today)).filter((j) => j.bulk_name === "lost-answer-1")).toHaveLength(1);
      expect(client.counter.write).toBe(1);
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it("a storm of writes at 5 a minute is served in full without one 429", async () => {
    const client = new ServiceClient({
      baseUrl: service.url,
      apiUser: service.apiUser,
      apiToken: service.apiToken,
      // The worker's write_limit lowered to match the service's.
      limiter: new TokenBucketLimiter({ limits: { write: 5, read: 1_000 }, resetMarginMs: 300, resetJitterMs: 100 }),
    });
    // The write budget of the current minute may be partly spent by the test above: the probe learns it.
    const guids = Array.from({ length: 7 }, (_, i) => `S-${i}`);
    const results = await Promise.all(guids.map((guid) => client.itemAction("add", guid, { title: guid })));
    expect(results.every((r) => r.result === "success")).toBe(true);
    // Every write sent was served: a 429 would have cost one more request.
    expect(client.counter.write).toBe(7);
    for (const guid of guids) expect(await client.getItem({ guid })).toMatchObject({ guid });
  }, 200_000);
});
