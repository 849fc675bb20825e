import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStorageConnector } from "../../connectors/storage.js";
import { S3StorageConnector } from "../../connectors/storage-s3.js";
import type { ConnectionConfig, Connector } from "../../connectors/types.js";
import { memoryContext } from "../helpers/memory-context.js";
import { S3TestServer } from "../helpers/s3-server.js";
import { caught } from "../helpers/caught.js";

const work = mkdtempSync(path.join(tmpdir(), "conveyor-storage-"));
const s3 = new S3TestServer();
beforeAll(() => s3.start());
afterAll(() => s3.stop());


async function sha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

function bigFile(mb: number): string {
  const file = path.join(work, `big-${mb}.bin`);
  if (existsSync(file)) return file;
  const block = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < block.length; i++) block[i] = (i * 131 + 17) % 253;
  writeFileSync(file, Buffer.concat(Array.from({ length: mb }, (_, n) => Buffer.concat([block.subarray(1), Buffer.from([n])]))));
  return file;
}

type Make = (conn?: Partial<ConnectionConfig>) => Connector;

/**
 * `serverAtomic`: whether a lister of the storage can rely on the final name
 * appearing whole. Both storages can: the local one renames a `.part` file,
 * the S3 one uploads to a `.part` key and copies it (s3rver writes a PUT in
 * place while it streams, so a direct PUT would show a partial object).
 */
function storageContract(label: string, make: Make, serverAtomic = true): void {
  describe(`${label} storage`, () => {
    it("lists uploads, round-trips 50 MB with its hash, and keeps the account apart", async () => {
      const c = make({ path: "/in/feeds" });
      const src = bigFile(50);
      const started = Date.now();
      expect(await c.upload(src, "stock.bin")).toEqual({ size: 50 * 1024 * 1024 });
      const up = Date.now() - started;
      const listed = await c.list();
      expect(listed.map((f) => [f.name, f.path, f.size])).toEqual([["stock.bin", "stock.bin", 50 * 1024 * 1024]]);
      const local = path.join(work, `${label}-down.bin`);
      const t = Date.now();
      const first = listed[0];
      if (!first) throw new Error("nothing listed");
      expect((await c.download(first, local)).size).toBe(50 * 1024 * 1024);
      console.log(`${label} 50 MB: upload ${up} ms, download ${Date.now() - t} ms`);
      expect(await sha256(local)).toBe(await sha256(src));
      expect(await make({ path: "in" }).list()).toEqual([]);
      await c.close();
    });

    it.skipIf(!serverAtomic)("never shows the final name before the upload is complete", async () => {
      const c = make({ path: "atomic" });
      await c.test();
      const src = bigFile(20);
      const sightings: number[] = [];
      let done = false;
      const upload = c.upload(src, "feed.csv").finally(() => (done = true));
      while (!done) {
        for (const f of await c.list()) sightings.push(f.name === "feed.csv" ? f.size : -1);
        await new Promise((r) => setTimeout(r, 5));
      }
      await upload;
      expect(sightings.filter((s) => s !== 20 * 1024 * 1024)).toEqual([]);
      expect((await c.list()).map((f) => f.name)).toEqual(["feed.csv"]);
    });

    it("reports a missing file as not_found and leaves no partial download", async () => {
      const c = make({ path: "missing" });
      const local = path.join(work, `${label}-missing.csv`);
      const ghost = { name: "ghost.csv", path: "ghost.csv", size: 1, modified: null };
      expect((await caught(c.download(ghost, local))).code).toBe("not_found");
      expect(existsSync(local) || existsSync(`${local}.part`)).toBe(false);
      expect((await caught(c.delete(ghost))).code).toBe("not_found");
    });

    it("moves into a folder, stamping the name when the target exists, and deletes", async () => {
      const c = make({ path: "mv" });
      const src = path.join(work, "small.csv");
      writeFileSync(src, "sku,qty\nA,1\n");
      await c.upload(src, "a.csv");
      await c.mkdir("done");
      const [a] = await c.list();
      if (!a) throw new Error("nothing listed");
      expect(await c.move(a, "done")).toBe("done/a.csv");
      await c.upload(src, "a.csv");
      const [again] = await c.list();
      if (!again) throw new Error("nothing listed");
      expect(await c.move(again, "done")).toMatch(/^done\/a-\d{8}-\d{6}\.csv$/);
      expect(await c.list()).toEqual([]);
      const moved = await c.list("done");
      expect(moved).toHaveLength(2);
      const local = path.join(work, `${label}-moved.csv`);
      const first = moved[0];
      if (!first) throw new Error("nothing moved");
      await c.download(first, local);
      expect(readFileSync(local, "utf8")).toBe("sku,qty\nA,1\n");
      await c.delete(first);
      expect(await c.list("done")).toHaveLength(1);
    });

    it("refuses paths that climb out of the account's storage", async () => {
      const src = path.join(work, "small.csv");
      writeFileSync(src, "x\n");
      expect(() => make({ path: "../other-user" })).toThrow(/climbs out/);
      const c = make({ path: "safe" });
      for (const p of [c.upload(src, "../../escape.csv"), c.list("../.."), c.move({ name: "x", path: "x", size: 0, modified: null }, "../../x")]) {
        const err = await caught(p);
        expect(err.code).toBe("unsafe_path");
      }
      const ok = await c.test();
      expect(ok.facts.folder).toBe("/safe");
    });
  });
}

const localRoot = path.join(work, "local-storage");
storageContract("local", (conn) => createStorageConnector({ type: "sdsftp", path: "", ...conn }, memoryContext({ storage: localRoot })));
storageContract("s3", (conn) => new S3StorageConnector("sds3", { type: "sds3", path: "", ...conn }, memoryContext({ storage: `s3://${s3.bucket}/tenants` }), { env: s3.env() }));

describe("storage routing and S3 faults", () => {
  it("keeps the local storage under <storage>/<apiUser>/ and routes both types by the setting", async () => {
    expect(existsSync(path.join(localRoot, "demo", "in", "feeds", "stock.bin"))).toBe(true);
    const ctx = memoryContext({ storage: `s3://${s3.bucket}/x` });
    const routed = createStorageConnector({ type: "sdsftp", path: "a" }, ctx);
    // The S3 connector loads with the first operation: its answer, or its error, names the bucket.
    const outcome = await routed.test().then((r) => JSON.stringify(r.facts), (err: unknown) => String(err));
    await routed.close();
    expect(outcome).toContain(s3.bucket);
  });

  it("wrong S3 credentials: auth error, not retried, secret not shown", async () => {
    const ctx = memoryContext({ storage: `s3://${s3.bucket}/p` });
    // s3rver checks the key id only (it does not verify v4 signatures), so the wrong pair has a wrong id.
    const env = s3.env({ AWS_ACCESS_KEY_ID: "NOT-A-KEY", AWS_SECRET_ACCESS_KEY: "wrong-secret-key-991" });
    const c = new S3StorageConnector("sds3", { type: "sds3", path: "" }, ctx, { env });
    const err = await caught(c.list());
    expect(err.code).toBe("auth");
    expect(err.retryable).toBe(false);
    expect(JSON.stringify(err.toJSON()) + ctx.logText()).not.toContain("wrong-secret-key-991");
    await c.close();
  });

  it("unknown bucket: not_found naming CONVEYOR_STORAGE", async () => {
    const c = new S3StorageConnector("sds3", { type: "sds3", path: "" }, memoryContext({ storage: "s3://no-such-bucket/p" }), { env: s3.env() });
    const err = await caught(c.test());
    expect(err.code).toBe("not_found");
    expect(err.describe()).toContain("CONVEYOR_STORAGE");
  });

  it("slow S3 server: timeout; refused port: retryable connect error", async () => {
    const sockets = new Set<import("node:net").Socket>();
    const silent: Server = createServer(() => undefined);
    silent.on("connection", (s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as AddressInfo).port;
    const ctx = memoryContext({ storage: `s3://${s3.bucket}/p` });
    const slow = new S3StorageConnector("sds3", { type: "sds3", path: "" }, ctx, { env: s3.env({ CONVEYOR_S3_ENDPOINT: `http://127.0.0.1:${port}` }), timeoutMs: 300 });
    const err = await caught(slow.list());
    expect(err.code).toBe("timeout");
    expect(err.retryable).toBe(true);
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
    const refused = new S3StorageConnector("sds3", { type: "sds3", path: "" }, ctx, { env: s3.env({ CONVEYOR_S3_ENDPOINT: `http://127.0.0.1:${port}` }) });
    const err2 = await caught(refused.list());
    expect(err2.code).toBe("connect");
    expect(err2.retryable).toBe(true);
  });
});
